import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { ProviderCredential } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { when } from "../ui/format";
import type { Abilities } from "./abilities";

const PROVIDERS = ["openai", "anthropic", "google", "groq", "deepseek", "xai", "together", "fireworks", "mistral", "azure", "bedrock", "vertex"];

/** One field of a cloud's credential document, as the form asks for it. */
interface CloudField {
  name: string;
  label: string;
  secret?: boolean;
  optional?: boolean;
  /** Several lines: `deployments` as `model = deployment` lines, a service account's JSON. */
  lines?: boolean;
  placeholder?: string;
}

const CLOUD_FIELDS: Record<string, CloudField[]> = {
  azure: [
    { name: "endpoint", label: "Resource endpoint", placeholder: "https://contoso.openai.azure.com" },
    { name: "region", label: "Region", placeholder: "swedencentral" },
    { name: "api_version", label: "API version (optional)", optional: true, placeholder: "2024-10-21" },
    { name: "deployments", label: "Deployments, one per line: model = deployment", lines: true, placeholder: "openai/gpt-4o = gpt4o-prod" },
    { name: "api_key", label: "Resource key", secret: true },
  ],
  bedrock: [
    { name: "region", label: "Region", placeholder: "eu-central-1" },
    { name: "access_key_id", label: "Access key id" },
    { name: "secret_access_key", label: "Secret access key", secret: true },
    { name: "session_token", label: "Session token (optional)", secret: true, optional: true },
    { name: "role_arn", label: "Role to assume (optional)", optional: true, placeholder: "arn:aws:iam::123456789012:role/router" },
  ],
  vertex: [
    { name: "project", label: "Project", placeholder: "acme-prod" },
    { name: "region", label: "Region", placeholder: "europe-west4" },
    { name: "service_account", label: "Service account key (JSON)", lines: true, secret: true },
  ],
};

/** `model = deployment` lines as the map Azure's document takes; a line without `=` is kept whole so the server names it. */
function deploymentsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const [model, deployment] = line.split("=").map((x) => x.trim());
    if (model) out[model] = deployment ?? "";
  }
  return out;
}

function cloudDocument(provider: string, values: Record<string, string>): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const f of CLOUD_FIELDS[provider] ?? []) {
    const v = (values[f.name] ?? "").trim();
    if (v === "" && f.optional) continue;
    doc[f.name] = f.name === "deployments" ? deploymentsOf(v) : v;
  }
  return doc;
}

interface Draft {
  provider: string;
  api_key: string;
  /** A cloud's fields, by name. */
  cloud: Record<string, string>;
  name: string;
  tier: "prioritized" | "fallback";
  priority: string;
}

function AddCredential({ onAdded }: { onAdded: () => void }) {
  const [draft, setDraft] = useState<Draft>({ provider: "openai", api_key: "", cloud: {}, name: "", tier: "prioritized", priority: "0" });
  const action = useAction();
  const fields = CLOUD_FIELDS[draft.provider];
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => {
      const priority = Number(draft.priority);
      await api.post("/v1/provider-keys", {
        provider: draft.provider,
        ...(fields ? { [draft.provider]: cloudDocument(draft.provider, draft.cloud) } : { api_key: draft.api_key }),
        ...(draft.name.trim() ? { name: draft.name.trim() } : {}),
        tier: draft.tier,
        priority: Number.isInteger(priority) ? priority : draft.priority,
      });
    });
    if (ok) {
      setDraft({ ...draft, api_key: "", cloud: {}, name: "" });
      onAdded();
    }
  };
  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby="add-credential-heading">
      <h3 id="add-credential-heading">Add a provider key or cloud account</h3>
      <div class="field">
        <label for="pk-provider">Provider</label>
        <select id="pk-provider" value={draft.provider} onChange={(e) => setDraft({ ...draft, provider: e.currentTarget.value })}>
          {PROVIDERS.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </div>
      {fields ? (
        fields.map((f) => {
          const id = `pk-${draft.provider}-${f.name}`;
          const value = draft.cloud[f.name] ?? "";
          const set = (v: string) => setDraft({ ...draft, cloud: { ...draft.cloud, [f.name]: v } });
          return (
            <div class="field" key={id}>
              <label for={id}>{f.label}</label>
              {f.lines ? (
                <textarea id={id} rows={f.name === "service_account" ? 6 : 3} autoComplete="off" spellcheck={false} placeholder={f.placeholder} value={value} onInput={(e) => set(e.currentTarget.value)} required={!f.optional} />
              ) : f.secret ? (
                <input id={id} type="password" autoComplete="off" placeholder={f.placeholder} value={value} onInput={(e) => set(e.currentTarget.value)} required={!f.optional} />
              ) : (
                <input id={id} type="text" autoComplete="off" placeholder={f.placeholder} value={value} onInput={(e) => set(e.currentTarget.value)} required={!f.optional} />
              )}
            </div>
          );
        })
      ) : (
        <div class="field">
          <label for="pk-key">API key</label>
          <input id="pk-key" type="password" autoComplete="off" value={draft.api_key} onInput={(e) => setDraft({ ...draft, api_key: e.currentTarget.value })} required />
        </div>
      )}
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

/** A cloud credential's region and where it points: `swedencentral · https://contoso.openai.azure.com`. */
function whereItPoints(settings: Record<string, unknown>): string {
  return ["region", "endpoint", "project", "role_arn", "client_email"]
    .map((k) => settings[k])
    .filter((v): v is string => typeof v === "string" && v !== "")
    .join(" · ");
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
      {c.settings && <p class="hint">{whereItPoints(c.settings)}</p>}
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
