import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { LimitReset, WorkspaceRow } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { money } from "../ui/format";
import { numberOf } from "../ui/number-input";
import type { Abilities } from "./abilities";

interface Budget {
  interval: LimitReset;
  limit_nanodollars: string;
  include_byok: boolean;
}

const INTERVALS: LimitReset[] = ["daily", "weekly", "monthly", "lifetime"];

function Budgets({ workspace, can }: { workspace: WorkspaceRow; can: Abilities }) {
  const load = useLoad(() => api.get<Budget[]>(`/v1/workspaces/${workspace.id}/budgets`), [workspace.id]);
  const [interval, setInterval] = useState<LimitReset>("monthly");
  const [limit, setLimit] = useState("");
  const action = useAction();
  const id = `budget-${workspace.id}`;
  const save = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => void (await api.put(`/v1/workspaces/${workspace.id}/budgets/${interval}`, { limit_usd: numberOf(limit) })));
    if (ok) load.reload();
  };
  return (
    <>
      <Show load={load} what="budgets">
        {(budgets) =>
          budgets.length === 0 ? (
            <p class="hint">No budget.</p>
          ) : (
            <ul class="plain">
              {budgets.map((b) => (
                <li key={b.interval}>
                  {b.interval}: {money(Number(b.limit_nanodollars) / 1e9)}
                  {b.include_byok ? " (your provider keys included)" : ""}
                  {can.configure && (
                    <button type="button" class="link" onClick={() => void action.run(async () => void (await api.del(`/v1/workspaces/${workspace.id}/budgets/${b.interval}`))).then((ok) => ok && load.reload())}>
                      Remove {b.interval} budget
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      {can.configure && (
        <form class="inline-form" onSubmit={(e) => void save(e)}>
          <div class="field">
            <label for={`${id}-interval`}>Budget window</label>
            <select id={`${id}-interval`} value={interval} onChange={(e) => setInterval(e.currentTarget.value as LimitReset)}>
              {INTERVALS.map((i) => (
                <option key={i}>{i}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for={`${id}-limit`}>Limit (USD)</label>
            <input id={`${id}-limit`} inputMode="decimal" value={limit} onInput={(e) => setLimit(e.currentTarget.value)} required />
          </div>
          <button type="submit" disabled={action.busy}>
            Set budget
          </button>
        </form>
      )}
      <ErrorNotice error={action.error} />
    </>
  );
}

export function WorkspacesSection({ can }: { can: Abilities }) {
  const load = useLoad(() => api.get<WorkspaceRow[]>("/v1/workspaces"), []);
  const [name, setName] = useState("");
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    if (await action.run(async () => void (await api.post("/v1/workspaces", { name })))) {
      setName("");
      load.reload();
    }
  };
  return (
    <section aria-labelledby="workspaces-heading">
      <h2 id="workspaces-heading">Workspaces and budgets</h2>
      {can.configure && (
        <form class="card inline-form" onSubmit={(e) => void create(e)}>
          <div class="field">
            <label for="ws-name">New workspace name</label>
            <input id="ws-name" value={name} maxLength={80} onInput={(e) => setName(e.currentTarget.value)} required />
          </div>
          <button type="submit" class="primary" disabled={action.busy}>
            Create workspace
          </button>
          <ErrorNotice error={action.error} />
        </form>
      )}
      <Show load={load} what="workspaces">
        {(rows) => (
          <ul class="plain list">
            {rows.map((w) => (
              <li key={w.id} class="card">
                <h3>{w.name}</h3>
                <p>Spent this month: {money(w.spend_this_month)}</p>
                <Budgets workspace={w} can={can} />
              </li>
            ))}
          </ul>
        )}
      </Show>
    </section>
  );
}
