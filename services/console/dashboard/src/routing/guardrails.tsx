import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { FilterAction, Guardrail, KeyRow, Member } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";

/** The built-in detectors the API knows (content_filter_builtins). */
const BUILTINS = ["email", "phone", "credit_card", "ssn", "ip_address", "api_key"] as const;
const listOf = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean);

interface Draft {
  name: string;
  models: string;
  providers: string;
  builtins: string[];
  pattern: string;
  patternName: string;
  action: FilterAction;
}

const EMPTY: Draft = { name: "", models: "", providers: "", builtins: [], pattern: "", patternName: "", action: "block" };

function CreateGuardrail({ onCreated }: { onCreated: () => void }) {
  const [d, setDraft] = useState<Draft>(EMPTY);
  const action = useAction();
  const set = (part: Partial<Draft>) => setDraft({ ...d, ...part });
  const create = async (e: Event) => {
    e.preventDefault();
    const body = {
      name: d.name,
      allowed_models: listOf(d.models),
      allowed_providers: listOf(d.providers),
      content_filter_builtins: d.builtins,
      content_filters: d.pattern ? [{ pattern: d.pattern, action: d.action, ...(d.patternName ? { name: d.patternName } : {}) }] : [],
    };
    if (await action.run(async () => void (await api.post("/v1/guardrails", body)))) {
      setDraft(EMPTY);
      onCreated();
    }
  };
  return (
    <form class="card" onSubmit={(e) => void create(e)} aria-labelledby="new-guardrail-heading">
      <h4 id="new-guardrail-heading">New guardrail</h4>
      <div class="field">
        <label for="guardrail-name">Guardrail name</label>
        <input id="guardrail-name" value={d.name} onInput={(e) => set({ name: e.currentTarget.value })} required />
      </div>
      <div class="field">
        <label for="guardrail-models">Only these models (comma separated, empty for any)</label>
        <input id="guardrail-models" value={d.models} onInput={(e) => set({ models: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="guardrail-providers">Only these providers (comma separated, empty for any)</label>
        <input id="guardrail-providers" value={d.providers} onInput={(e) => set({ providers: e.currentTarget.value })} />
      </div>
      <fieldset>
        <legend>Built-in content filters (block)</legend>
        {BUILTINS.map((b) => (
          <div class="field check" key={b}>
            <input
              id={`builtin-${b}`}
              type="checkbox"
              checked={d.builtins.includes(b)}
              onChange={(e) => set({ builtins: e.currentTarget.checked ? [...d.builtins, b] : d.builtins.filter((x) => x !== b) })}
            />
            <label for={`builtin-${b}`}>{b.replace("_", " ")}</label>
          </div>
        ))}
      </fieldset>
      <fieldset>
        <legend>A content filter of your own</legend>
        <div class="field">
          <label for="filter-pattern">Pattern (RE2, no lookaround or backreferences)</label>
          <input id="filter-pattern" value={d.pattern} onInput={(e) => set({ pattern: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="filter-name">Filter label (optional)</label>
          <input id="filter-name" value={d.patternName} onInput={(e) => set({ patternName: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="filter-action">On a match</label>
          <select id="filter-action" value={d.action} onChange={(e) => set({ action: e.currentTarget.value as FilterAction })}>
            <option value="block">refuse the request (block)</option>
            <option value="redact">redact the match</option>
            <option value="flag">record it (flag)</option>
          </select>
        </div>
      </fieldset>
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Create guardrail
      </button>
    </form>
  );
}

type Subject = Guardrail["assignments"][number]["subject_type"];

/** One assignment form: a subject picked from its list, sent as the API's `{subject_type, subject_id}`. */
function AssignForm({ g, type, choices, busy, onAssign }: { g: Guardrail; type: Subject; choices: Array<{ id: string; label: string }>; busy: boolean; onAssign: (id: string) => void }) {
  const [chosen, setChosen] = useState("");
  const id = `assign-${type}-${g.id}`;
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        onAssign(chosen);
      }}
    >
      <div class="field">
        <label for={id}>
          Apply {g.name} to {type}
        </label>
        <select id={id} value={chosen} onChange={(e) => setChosen(e.currentTarget.value)} required>
          <option value="">choose a {type}</option>
          {choices.map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" disabled={busy}>
        Apply to {type}
      </button>
    </form>
  );
}

function GuardrailCard({ g, keys, members, canWrite, onChanged }: { g: Guardrail; keys: KeyRow[]; members: Member[]; canWrite: boolean; onChanged: () => void }) {
  const action = useAction();
  const keyChoices = keys.filter((k) => k.class === "inference").map((k) => ({ id: k.hash, label: k.name ?? k.prefix }));
  const memberChoices = members.map((m) => ({ id: m.user_id, label: `${m.name ?? m.email ?? m.user_id} (${m.role_name})` }));
  const named = (type: Subject, id: string) =>
    type === "key" ? `key ${keys.find((k) => k.hash === id)?.name ?? `${id.slice(0, 12)}…`}` : `member ${memberChoices.find((m) => m.id === id)?.label ?? id}`;
  const act = (fn: () => Promise<unknown>) => void action.run(async () => void (await fn())).then((ok) => ok && onChanged());
  const assign = (subject_type: Subject) => (subject_id: string) => act(() => api.post(`/v1/guardrails/${g.id}/assignments`, { subject_type, subject_id }));
  return (
    <li class="card">
      <h4>{g.name}</h4>
      <dl class="facts">
        <dt>Models</dt>
        <dd>{g.model_allowlist.length ? g.model_allowlist.join(", ") : "any"}</dd>
        <dt>Providers</dt>
        <dd>{g.provider_allowlist.length ? g.provider_allowlist.join(", ") : "any"}</dd>
        <dt>Content filters</dt>
        <dd>
          {[...g.content_filter_builtins, ...g.content_filters.map((f) => `${f.name ?? f.pattern} (${f.action})`)].join(", ") || "none"}
        </dd>
        <dt>Applies to</dt>
        <dd data-testid={`assignments-${g.id}`}>{g.assignments.length ? g.assignments.map((a) => named(a.subject_type, a.subject_id)).join(", ") : "nobody yet"}</dd>
      </dl>
      {canWrite && (
        <>
          <AssignForm g={g} type="key" choices={keyChoices} busy={action.busy} onAssign={assign("key")} />
          <AssignForm g={g} type="member" choices={memberChoices} busy={action.busy} onAssign={assign("member")} />
          <button type="button" class="danger" disabled={action.busy} aria-label={`Delete guardrail ${g.name}`} onClick={() => confirm(`Delete ${g.name}?`) && act(() => api.del(`/v1/guardrails/${g.id}`))}>
            Delete
          </button>
        </>
      )}
      <ErrorNotice error={action.error} />
    </li>
  );
}

/**
 * Guardrails: allowlists and content filters applied to keys and members (the API's two subjects;
 * it has no workspace subject and no unassign route); owners and admins write.
 */
export function GuardrailsPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(
    () => Promise.all([api.get<Guardrail[]>("/v1/guardrails"), api.get<KeyRow[]>("/v1/keys"), api.get<Member[]>("/v1/organization/members")]),
    [],
  );
  return (
    <section aria-labelledby="guardrails-heading">
      <h3 id="guardrails-heading">Guardrails</h3>
      <p class="hint">
        Restrictions and content filters for the keys and members they are applied to; they outrank a request's own preferences. An assignment ends only with its
        guardrail (the API has no unassign).
      </p>
      {canWrite && <CreateGuardrail onCreated={load.reload} />}
      <Show load={load} what="guardrails">
        {([guardrails, keys, members]) =>
          guardrails.length === 0 ? (
            <p class="hint">No guardrails.</p>
          ) : (
            <ul class="plain list" data-testid="guardrails">
              {guardrails.map((g) => (
                <GuardrailCard key={g.id} g={g} keys={keys} members={members} canWrite={canWrite} onChanged={load.reload} />
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}
