import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { RoutingDefaults } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { when } from "../ui/format";

type Sort = RoutingDefaults["default_sort"];

/** The form's own copy of the defaults: what is typed survives a refused save. */
function DefaultsForm({ saved, canWrite, onSaved }: { saved: RoutingDefaults; canWrite: boolean; onSaved: () => void }) {
  const [model, setModel] = useState(saved.default_model ?? "");
  const [fallbacks, setFallbacks] = useState(saved.fallback_models.join(", "));
  const [sort, setSort] = useState<Sort>(saved.default_sort);
  const [lock, setLock] = useState(saved.lock_sort);
  const action = useAction();
  const save = async (e: Event) => {
    e.preventDefault();
    const body = {
      default_model: model.trim() || null,
      fallback_models: fallbacks.split(",").map((m) => m.trim()).filter(Boolean),
      default_sort: sort,
      lock_sort: lock,
    };
    if (await action.run(async () => void (await api.put("/v1/routing/defaults", body)))) onSaved();
  };
  return (
    <form class="card" onSubmit={(e) => void save(e)} aria-labelledby="defaults-heading">
      <h3 id="defaults-heading">Account defaults</h3>
      <p class="hint">Last changed {when(saved.updated_at)}. Used when a request names no model, or no sort of its own.</p>
      <fieldset disabled={!canWrite} class="plain-fieldset">
        <div class="field">
          <label for="default-model">Default model (empty for none)</label>
          <input id="default-model" value={model} onInput={(e) => setModel(e.currentTarget.value)} placeholder="openai/gpt-4o-mini" />
        </div>
        <div class="field">
          <label for="fallback-models">Fallback models (comma separated, at most 10)</label>
          <input id="fallback-models" value={fallbacks} onInput={(e) => setFallbacks(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="default-sort">Order endpoints by</label>
          <select id="default-sort" value={sort ?? ""} onChange={(e) => setSort((e.currentTarget.value || null) as Sort)}>
            <option value="">the router's balance (no default sort)</option>
            <option value="price">price</option>
            <option value="throughput">throughput</option>
            <option value="latency">latency</option>
          </select>
        </div>
        <div class="field check">
          <input id="lock-sort" type="checkbox" checked={lock} onChange={(e) => setLock(e.currentTarget.checked)} />
          <label for="lock-sort">Lock the order (it overrides a request's own sort)</label>
        </div>
      </fieldset>
      <ErrorNotice error={action.error} />
      {canWrite ? (
        <button type="submit" class="primary" disabled={action.busy}>
          Save defaults
        </button>
      ) : (
        <p class="hint">Only an owner or an admin changes the account defaults.</p>
      )}
    </form>
  );
}

export function RoutingDefaultsPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(() => api.get<RoutingDefaults>("/v1/routing/defaults"), []);
  return (
    <Show load={load} what="routing defaults">
      {(d) => <DefaultsForm key={d.updated_at ?? "never"} saved={d} canWrite={canWrite} onSaved={load.reload} />}
    </Show>
  );
}
