import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Eligibility, PrivacyPolicy, PrivacyState } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { number } from "../ui/format";

const toggle = (list: string[], item: string, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item));

function EligibilityLine({ e, testId, lead }: { e: Eligibility; testId: string; lead: string }) {
  return (
    <p>
      {lead}{" "}
      <span data-testid={testId}>
        {number(e.available)} models available, {number(e.unavailable)} without an endpoint this policy allows
      </span>
    </p>
  );
}

function PolicyForm({ state, canWrite, onSaved }: { state: PrivacyState; canWrite: boolean; onSaved: () => void }) {
  const [policy, setPolicy] = useState<PrivacyPolicy>(state.policy);
  const [preview, setPreview] = useState<Eligibility>();
  const action = useAction();
  const set = (part: Partial<PrivacyPolicy>) => {
    setPolicy({ ...policy, ...part });
    setPreview(undefined);
  };
  const runPreview = () => void action.run(async () => setPreview(await api.post<Eligibility>("/v1/privacy/preview", policy)));
  const save = async (e: Event) => {
    e.preventDefault();
    if (await action.run(async () => void (await api.put("/v1/privacy", policy)))) onSaved();
  };
  return (
    <form class="card" onSubmit={(e) => void save(e)} aria-labelledby="privacy-heading">
      <h3 id="privacy-heading">Privacy policy</h3>
      <EligibilityLine e={state.eligibility} testId="privacy-saved" lead="Saved policy:" />
      <fieldset disabled={!canWrite} class="plain-fieldset">
        <div class="field check">
          <input id="privacy-zdr" type="checkbox" checked={policy.zdr} onChange={(e) => set({ zdr: e.currentTarget.checked })} />
          <label for="privacy-zdr">Zero data retention on every endpoint</label>
        </div>
        <div class="field check">
          <input id="privacy-training" type="checkbox" checked={policy.deny_training} onChange={(e) => set({ deny_training: e.currentTarget.checked })} />
          <label for="privacy-training">Only endpoints that do not train on requests</label>
        </div>
        <fieldset>
          <legend>Zero data retention for the models of</legend>
          {state.groups.map((g) => (
            <div class="field check" key={g.group}>
              <input id={`zdr-${g.group}`} type="checkbox" checked={policy.zdr_groups.includes(g.group)} onChange={(e) => set({ zdr_groups: toggle(policy.zdr_groups, g.group, e.currentTarget.checked) })} />
              <label for={`zdr-${g.group}`}>
                {g.group} ({number(g.models)} models)
              </label>
            </div>
          ))}
        </fieldset>
        <fieldset>
          <legend>Only endpoints in these regions (none ticked: any region)</legend>
          {state.regions.length === 0 && <p class="hint">No endpoint of the catalog declares a region.</p>}
          {state.regions.map((r) => (
            <div class="field check" key={r}>
              <input id={`region-${r}`} type="checkbox" checked={policy.regions.includes(r)} onChange={(e) => set({ regions: toggle(policy.regions, r, e.currentTarget.checked) })} />
              <label for={`region-${r}`}>{r}</label>
            </div>
          ))}
        </fieldset>
      </fieldset>
      {preview && (
        <div role="status">
          <EligibilityLine e={preview} testId="privacy-preview" lead="With these changes (not saved):" />
          {preview.excluded && preview.excluded.length > 0 && (
            <details>
              <summary>Models this policy would exclude ({number(preview.excluded.length)})</summary>
              <ul>
                {preview.excluded.map((x) => (
                  <li key={x.model_id}>
                    {x.model_id}: {x.constraints.join(", ")}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      )}
      <ErrorNotice error={action.error} />
      {canWrite ? (
        <div class="actions">
          <button type="button" disabled={action.busy} onClick={runPreview}>
            Preview policy
          </button>
          <button type="submit" class="primary" disabled={action.busy}>
            Save policy
          </button>
        </div>
      ) : (
        <p class="hint">Only an owner or an admin changes the privacy policy.</p>
      )}
    </form>
  );
}

export function PrivacyPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(() => api.get<PrivacyState>("/v1/privacy"), []);
  return <Show load={load} what="the privacy policy">{(s) => <PolicyForm key={JSON.stringify(s.policy)} state={s} canWrite={canWrite} onSaved={load.reload} />}</Show>;
}
