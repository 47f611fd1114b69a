import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { CreatedKey, KeyRow, LimitReset } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { CopyButton } from "../ui/copy-button";
import { money, when } from "../ui/format";
import type { Abilities } from "./abilities";

const RESETS: LimitReset[] = ["daily", "weekly", "monthly", "lifetime"];

interface CeilingDraft {
  limit: string;
  limit_reset: LimitReset;
  limit_mode: "hard" | "soft";
  include_byok_in_limit: boolean;
}

/** The ceiling fields of a key, as the create and change forms share them. */
function CeilingFields({ id, draft, onChange }: { id: string; draft: CeilingDraft; onChange: (d: CeilingDraft) => void }) {
  return (
    <>
      <div class="field">
        <label for={`${id}-limit`}>Spend ceiling (USD, empty for none)</label>
        <input id={`${id}-limit`} inputMode="decimal" value={draft.limit} onInput={(e) => onChange({ ...draft, limit: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={`${id}-reset`}>Resets</label>
        <select id={`${id}-reset`} value={draft.limit_reset} onChange={(e) => onChange({ ...draft, limit_reset: e.currentTarget.value as LimitReset })}>
          {RESETS.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`${id}-mode`}>At the ceiling</label>
        <select id={`${id}-mode`} value={draft.limit_mode} onChange={(e) => onChange({ ...draft, limit_mode: e.currentTarget.value as "hard" | "soft" })}>
          <option value="hard">refuse (hard)</option>
          <option value="soft">serve and warn (soft)</option>
        </select>
      </div>
      <div class="field check">
        <input
          id={`${id}-byok`}
          type="checkbox"
          checked={draft.include_byok_in_limit}
          onChange={(e) => onChange({ ...draft, include_byok_in_limit: e.currentTarget.checked })}
        />
        <label for={`${id}-byok`}>Count requests served on your provider keys (at list price)</label>
      </div>
    </>
  );
}

/** The ceiling as the API takes it: a number, or null for none (a malformed number goes as typed, for the API to name). */
function ceilingOf(d: CeilingDraft) {
  const text = d.limit.trim();
  const limit = text === "" ? null : Number.isFinite(Number(text)) ? Number(text) : text;
  return { limit, limit_reset: d.limit_reset, limit_mode: d.limit_mode, include_byok_in_limit: d.include_byok_in_limit };
}

function CreateKey({ onCreated }: { onCreated: (k: CreatedKey) => void }) {
  const [name, setName] = useState("");
  const [ceiling, setCeiling] = useState<CeilingDraft>({ limit: "", limit_reset: "monthly", limit_mode: "hard", include_byok_in_limit: true });
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      const c = ceilingOf(ceiling);
      const body = c.limit === null ? { name } : { name, ...c };
      onCreated(await api.post<CreatedKey>("/v1/keys", body));
      setName("");
    });
  };
  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby="new-key-heading">
      <h3 id="new-key-heading">New key</h3>
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
      </div>
      <CeilingFields id="new-key" draft={ceiling} onChange={setCeiling} />
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? "Creating…" : "Create key"}
      </button>
    </form>
  );
}

function KeyActions({ k, onChanged }: { k: KeyRow; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [ceiling, setCeiling] = useState<CeilingDraft>({
    limit: k.limit === null ? "" : String(k.limit),
    limit_reset: k.limit_reset ?? "lifetime",
    limit_mode: k.limit_mode,
    include_byok_in_limit: k.include_byok_in_limit,
  });
  const action = useAction();
  const label = k.name ?? k.label ?? k.prefix;
  const act = async (fn: () => Promise<unknown>) => {
    const ok = await action.run(async () => void (await fn()));
    if (ok) onChanged();
    return ok;
  };
  return (
    <div class="row-actions">
      <ErrorNotice error={action.error} />
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            // The form stays open with what was typed when the save is refused.
            void act(() => api.patch(`/v1/keys/${k.hash}`, ceilingOf(ceiling))).then((ok) => ok && setEditing(false));
          }}
        >
          <CeilingFields id={`key-${k.hash.slice(0, 8)}`} draft={ceiling} onChange={setCeiling} />
          <button type="submit" class="primary" disabled={action.busy}>
            Save ceiling
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <button type="button" disabled={action.busy} onClick={() => setEditing(true)} aria-label={`Change the ceiling of ${label}`}>
            Ceiling
          </button>
          <button type="button" disabled={action.busy} onClick={() => void act(() => api.patch(`/v1/keys/${k.hash}`, { paused: !k.paused }))} aria-label={`${k.paused ? "Resume" : "Pause"} ${label}`}>
            {k.paused ? "Resume" : "Pause"}
          </button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Revoke ${label}`}
            onClick={() => {
              if (confirm(`Revoke ${label}? Apps using it stop working at once.`)) void act(() => api.del(`/v1/keys/${k.hash}`));
            }}
          >
            Revoke
          </button>
        </>
      )}
    </div>
  );
}

export function KeysSection({ can }: { can: Abilities }) {
  const load = useLoad(() => api.get<KeyRow[]>("/v1/keys"), []);
  const [created, setCreated] = useState<CreatedKey>();
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys</h2>
      {created && (
        <div class="card secret" role="status">
          <p>
            <strong>{created.name ?? "New key"}</strong>: copy it now. It is shown this once and cannot be read again.
          </p>
          <code data-testid="new-key">{created.key}</code> <CopyButton text={created.key} label="Copy the new key" />
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      {can.configure && (
        <CreateKey
          onCreated={(k) => {
            setCreated(k);
            load.reload();
          }}
        />
      )}
      <Show load={load} what="keys">
        {(keys) => (
          <ul class="plain list" data-testid="keys">
            {keys.map((k) => (
              <li key={k.hash} class="card">
                <h3>{k.name ?? k.label ?? k.prefix}</h3>
                <p class="hint">
                  {k.class} key {k.prefix}… created {when(k.created_at)}
                  {k.expires_at ? `, expires ${when(k.expires_at)}` : ""}
                </p>
                <p>
                  Ceiling: {k.limit === null ? "none" : `${money(k.limit)} ${k.limit_reset ?? "lifetime"} (${k.limit_mode}${k.include_byok_in_limit ? ", provider keys counted" : ""})`}
                  {k.usage !== null ? `; used ${money(k.usage)}` : ""}
                </p>
                {k.paused && <p class="warning">Paused{k.paused_reason ? ` (${k.paused_reason})` : ""}</p>}
                {can.configure && <KeyActions k={k} onChanged={load.reload} />}
              </li>
            ))}
          </ul>
        )}
      </Show>
    </section>
  );
}
