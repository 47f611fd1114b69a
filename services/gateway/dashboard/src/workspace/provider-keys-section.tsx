import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { ProviderCredential } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { when } from "../ui/format";
import type { Abilities } from "./abilities";

const PROVIDERS = ["openai", "anthropic", "google", "groq", "deepseek", "xai", "together", "fireworks", "mistral"];

interface Draft {
  provider: string;
  api_key: string;
  name: string;
  tier: "prioritized" | "fallback";
  priority: string;
}

function AddCredential({ onAdded }: { onAdded: () => void }) {
  const [draft, setDraft] = useState<Draft>({ provider: "openai", api_key: "", name: "", tier: "prioritized", priority: "0" });
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => {
      const priority = Number(draft.priority);
      await api.post("/v1/provider-keys", {
        provider: draft.provider,
        api_key: draft.api_key,
        ...(draft.name.trim() ? { name: draft.name.trim() } : {}),
        tier: draft.tier,
        priority: Number.isInteger(priority) ? priority : draft.priority,
      });
    });
    if (ok) {
      setDraft({ ...draft, api_key: "", name: "" });
      onAdded();
    }
  };
  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby="add-credential-heading">
      <h3 id="add-credential-heading">Add a provider key</h3>
      <div class="field">
        <label for="pk-provider">Provider</label>
        <select id="pk-provider" value={draft.provider} onChange={(e) => setDraft({ ...draft, provider: e.currentTarget.value })}>
          {PROVIDERS.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="pk-key">API key</label>
        <input id="pk-key" type="password" autoComplete="off" value={draft.api_key} onInput={(e) => setDraft({ ...draft, api_key: e.currentTarget.value })} required />
      </div>
      <div class="field">
        <label for="pk-name">Name (optional)</label>
        <input id="pk-name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="pk-tier">Tier</label>
        <select id="pk-tier" value={draft.tier} onChange={(e) => setDraft({ ...draft, tier: e.currentTarget.value as Draft["tier"] })}>
          <option value="prioritized">prioritized: used first</option>
          <option value="fallback">fallback: used after the others</option>
        </select>
      </div>
      <div class="field">
        <label for="pk-priority">Order within the tier (lower first)</label>
        <input id="pk-priority" inputMode="numeric" value={draft.priority} onInput={(e) => setDraft({ ...draft, priority: e.currentTarget.value })} />
      </div>
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? "Adding…" : "Add provider key"}
      </button>
    </form>
  );
}

function CredentialRow({ c, can, onChanged }: { c: ProviderCredential; can: Abilities; onChanged: () => void }) {
  const action = useAction();
  const label = `${c.provider_slug} key ${c.name ?? c.key_hint}`;
  const act = (fn: () => Promise<unknown>) => action.run(async () => void (await fn())).then((ok) => ok && onChanged());
  return (
    <li class="card">
      <h3>
        {c.provider_slug}
        {c.name ? `: ${c.name}` : ""}
      </h3>
      <p class="hint">
        …{c.key_hint || "····"}, {c.tier} #{c.priority}, last used {when(c.last_used_at)}
      </p>
      {c.disabled && <p class="warning">Disabled</p>}
      {can.configure && (
        <div class="row-actions">
          <ErrorNotice error={action.error} />
          <button type="button" disabled={action.busy} aria-label={`${c.disabled ? "Enable" : "Disable"} ${label}`} onClick={() => void act(() => api.patch(`/v1/provider-keys/${c.id}`, { disabled: !c.disabled }))}>
            {c.disabled ? "Enable" : "Disable"}
          </button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Delete ${label}`}
            onClick={() => {
              if (confirm(`Delete ${label}?`)) void act(() => api.del(`/v1/provider-keys/${c.id}`));
            }}
          >
            Delete
          </button>
        </div>
      )}
    </li>
  );
}

/** Provider credentials (BYOK) in the order routing tries them: tier, then priority. */
export function ProviderKeysSection({ can }: { can: Abilities }) {
  const load = useLoad(() => api.get<ProviderCredential[]>("/v1/provider-keys"), []);
  const rank = (c: ProviderCredential) => (c.tier === "prioritized" ? 0 : 1);
  return (
    <section aria-labelledby="provider-keys-heading">
      <h2 id="provider-keys-heading">Provider keys</h2>
      {can.configure && <AddCredential onAdded={load.reload} />}
      <Show load={load} what="provider keys">
        {(rows) =>
          rows.length === 0 ? (
            <p>No provider keys yet: requests need one for their provider.</p>
          ) : (
            <ol class="plain list">
              {[...rows]
                .sort((a, b) => rank(a) - rank(b) || a.priority - b.priority)
                .map((c) => (
                  <CredentialRow key={c.id} c={c} can={can} onChanged={load.reload} />
                ))}
            </ol>
          )
        }
      </Show>
    </section>
  );
}
