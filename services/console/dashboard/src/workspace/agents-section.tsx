import { useState } from "preact/hooks";
import { api, query } from "../api/client";
import type { AgentBudget, AgentRow, LimitReset, WorkspaceRow } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { money, number, when } from "../ui/format";
import { numberOf } from "../ui/number-input";
import type { Abilities } from "./abilities";

const INTERVALS: LimitReset[] = ["daily", "weekly", "monthly", "lifetime"];

interface BudgetDraft {
  agent: string;
  interval: LimitReset;
  limit: string;
  mode: "hard" | "soft";
  include_byok: boolean;
  workspace_id: string;
}

/** Sets a budget for any agent name (one that has not sent a request yet too), organisation-wide or in a workspace. */
function SetAgentBudget({ agents, workspaces, onSaved }: { agents: AgentRow[]; workspaces: WorkspaceRow[]; onSaved: () => void }) {
  const [draft, setDraft] = useState<BudgetDraft>({ agent: "", interval: "monthly", limit: "", mode: "hard", include_byok: true, workspace_id: "" });
  const action = useAction();
  const set = (part: Partial<BudgetDraft>) => setDraft({ ...draft, ...part });
  const save = async (e: Event) => {
    e.preventDefault();
    const body = { limit_usd: numberOf(draft.limit), mode: draft.mode, include_byok: draft.include_byok, workspace_id: draft.workspace_id || null };
    // The agent name goes as typed (encoded): the API names what it refuses.
    const ok = await action.run(async () => void (await api.put(`/v1/agents/${encodeURIComponent(draft.agent)}/budgets/${draft.interval}`, body)));
    if (ok) onSaved();
  };
  return (
    <form class="card" onSubmit={(e) => void save(e)} aria-labelledby="agent-budget-heading">
      <h3 id="agent-budget-heading">Set an agent budget</h3>
      <p class="hint">Requests name their agent in the x-router-agent header. A budget holds across every key that names it.</p>
      <div class="field">
        <label for="agent-name">Agent</label>
        <input id="agent-name" list="agent-names" value={draft.agent} onInput={(e) => set({ agent: e.currentTarget.value })} required />
        <datalist id="agent-names">
          {agents.map((a) => (
            <option key={a.agent} value={a.agent} />
          ))}
        </datalist>
      </div>
      <div class="field">
        <label for="agent-interval">Budget window</label>
        <select id="agent-interval" value={draft.interval} onChange={(e) => set({ interval: e.currentTarget.value as LimitReset })}>
          {INTERVALS.map((i) => (
            <option key={i}>{i}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="agent-limit">Agent limit (USD)</label>
        <input id="agent-limit" inputMode="decimal" value={draft.limit} onInput={(e) => set({ limit: e.currentTarget.value })} required />
      </div>
      <div class="field">
        <label for="agent-mode">At the limit</label>
        <select id="agent-mode" value={draft.mode} onChange={(e) => set({ mode: e.currentTarget.value as "hard" | "soft" })}>
          <option value="hard">refuse (hard)</option>
          <option value="soft">serve and warn (soft)</option>
        </select>
      </div>
      <div class="field">
        <label for="agent-scope">Applies to</label>
        <select id="agent-scope" value={draft.workspace_id} onChange={(e) => set({ workspace_id: e.currentTarget.value })}>
          <option value="">the whole organisation</option>
          {workspaces.map((w) => (
            <option key={w.id} value={w.id}>
              workspace {w.name}
            </option>
          ))}
        </select>
      </div>
      <div class="field check">
        <input id="agent-byok" type="checkbox" checked={draft.include_byok} onChange={(e) => set({ include_byok: e.currentTarget.checked })} />
        <label for="agent-byok">Count requests served on your provider keys (at list price)</label>
      </div>
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? "Saving…" : "Save agent budget"}
      </button>
    </form>
  );
}

function BudgetLine({ b, workspaces, can, onRemoved }: { b: AgentBudget; workspaces: WorkspaceRow[]; can: Abilities; onRemoved: () => void }) {
  const action = useAction();
  const scope = b.workspace_id ? `in workspace ${workspaces.find((w) => w.id === b.workspace_id)?.name ?? b.workspace_id}` : "organisation-wide";
  const text = `${b.interval}: ${money(b.limit_usd)} ${b.mode}, ${scope}${b.include_byok ? ", provider keys counted" : ""}`;
  const remove = () =>
    void action
      .run(async () => void (await api.del(`/v1/agents/${encodeURIComponent(b.agent)}/budgets/${b.interval}${query({ workspace_id: b.workspace_id })}`)))
      .then((ok) => ok && onRemoved());
  return (
    <li>
      {text}{" "}
      {can.configure && (
        <button type="button" class="link" disabled={action.busy} onClick={remove} aria-label={`Remove the ${b.interval} budget of ${b.agent} (${scope})`}>
          Remove
        </button>
      )}
      <ErrorNotice error={action.error} />
    </li>
  );
}

/** Agents (named by requests in the last 31 days, or budgeted) with their spend this month and budgets. */
export function AgentsSection({ can }: { can: Abilities }) {
  const load = useLoad(() => Promise.all([api.get<AgentRow[]>("/v1/agents"), api.get<WorkspaceRow[]>("/v1/workspaces")]), []);
  return (
    <section aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agents and their budgets</h2>
      <Show load={load} what="agents">
        {([agents, workspaces]) => (
          <>
            {can.configure && <SetAgentBudget agents={agents} workspaces={workspaces} onSaved={load.reload} />}
            {agents.length === 0 ? (
              <p class="hint">No agent has sent a request in the last 31 days, and none has a budget.</p>
            ) : (
              <ul class="plain list" data-testid="agents">
                {agents.map((a) => (
                  <li key={a.agent} class="card">
                    <h3>{a.agent}</h3>
                    <p>
                      This month: {money(a.spend_this_month)} over {number(a.requests_this_month)} requests; last seen {when(a.last_seen)}
                    </p>
                    {a.budgets.length === 0 ? (
                      <p class="hint">No budget.</p>
                    ) : (
                      <ul class="plain">
                        {a.budgets.map((b) => (
                          <BudgetLine key={`${b.interval}-${b.workspace_id ?? ""}`} b={b} workspaces={workspaces} can={can} onRemoved={load.reload} />
                        ))}
                      </ul>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Show>
    </section>
  );
}
