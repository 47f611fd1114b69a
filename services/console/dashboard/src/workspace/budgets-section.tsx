import { api } from "../api/client";
import type { AgentRow, KeyRow, WorkspaceBudget, WorkspaceRow } from "../api/types";
import { Show, useLoad } from "../ui/async";
import { Money } from "../ui/money";

/** One amount spent against its limit: a `<meter>` (no inline style), the figures, and what is left. */
function SpendMeter({ id, name, spent, limit, window, note }: { id: string; name: string; spent: number | null; limit: number; window: string; note?: string }) {
  const ratio = spent === null || limit <= 0 ? null : spent / limit;
  const pct = ratio === null ? null : Math.round(ratio * 1000) / 10;
  return (
    <li class="meter-line" data-testid={`meter-${id}`}>
      <div class="meter-head">
        <span class="wrap">
          <strong>{name}</strong> <span class="hint">{window}</span>
        </span>
        <span>
          {spent === null ? (
            <>
              limit <Money value={limit} />
            </>
          ) : (
            <>
              <Money value={spent} /> of <Money value={limit} />
              {pct !== null && ` (${pct}%)`}
            </>
          )}
        </span>
      </div>
      {spent !== null && (
        <meter
          min={0}
          max={limit > 0 ? limit : 1}
          low={limit * 0.75}
          high={limit * 0.9}
          optimum={0}
          value={Math.min(spent, limit > 0 ? limit : 1)}
          aria-label={`${name}, ${window}: ${pct ?? 0}% of the limit used`}
        />
      )}
      {note && <p class="hint">{note}</p>}
    </li>
  );
}

/**
 * `#budgets`: spend against every limit the organisation set, at a glance: workspace budgets (this
 * month's spend against a monthly budget), agent budgets, and key ceilings (the key's use in its
 * window against its ceiling). Limits are changed where they live (Workspaces, Agents, Keys).
 */
export function BudgetsSection() {
  const load = useLoad(async () => {
    const [workspaces, agents, keys] = await Promise.all([api.get<WorkspaceRow[]>("/v1/workspaces"), api.get<AgentRow[]>("/v1/agents"), api.get<KeyRow[]>("/v1/keys")]);
    const budgets = await Promise.all(workspaces.map((w) => api.get<WorkspaceBudget[]>(`/v1/workspaces/${w.id}/budgets`)));
    return { workspaces: workspaces.map((w, i) => ({ ...w, budgets: budgets[i] ?? [] })), agents, keys };
  }, []);
  return (
    <section aria-labelledby="budgets-heading">
      <h2 id="budgets-heading">Budgets and ceilings</h2>
      <p class="hint">Spend against each limit. A hard limit refuses requests once reached; a soft one warns. Change them under Workspaces, Agents and Keys.</p>
      <Show load={load} what="budgets">
        {({ workspaces, agents, keys }) => {
          const budgeted = workspaces.filter((w) => w.budgets.length > 0);
          const agentBudgets = agents.flatMap((a) => a.budgets.map((b) => ({ a, b })));
          const ceilings = keys.filter((k) => k.limit !== null && !k.disabled);
          return (
            <>
              <section class="card" aria-labelledby="workspace-budgets-heading">
                <h3 id="workspace-budgets-heading">Workspaces</h3>
                <ul class="plain meters" data-testid="workspace-budgets">
                  {workspaces.map((w) =>
                    w.budgets.length === 0 ? (
                      <li key={w.id} class="meter-line">
                        <div class="meter-head">
                          <strong class="wrap">{w.name}</strong>
                          <span>
                            <Money value={w.spend_this_month} /> this month, no budget
                          </span>
                        </div>
                      </li>
                    ) : (
                      w.budgets.map((b) => (
                        <SpendMeter
                          key={`${w.id}-${b.interval}`}
                          id={`workspace-${w.id}-${b.interval}`}
                          name={w.name}
                          window={b.interval}
                          limit={Number(b.limit_nanodollars) / 1e9}
                          spent={b.interval === "monthly" ? w.spend_this_month : null}
                          note={b.include_byok ? undefined : "Requests on your provider keys are not counted."}
                        />
                      ))
                    ),
                  )}
                </ul>
                {budgeted.length === 0 && <p class="hint">No workspace has a budget.</p>}
              </section>
              <section class="card" aria-labelledby="agent-budgets-heading">
                <h3 id="agent-budgets-heading">Agents</h3>
                {agentBudgets.length === 0 ? (
                  <p class="hint">No agent has a budget.</p>
                ) : (
                  <ul class="plain meters" data-testid="agent-budgets">
                    {agentBudgets.map(({ a, b }) => (
                      <SpendMeter
                        key={`${a.agent}-${b.interval}-${b.workspace_id ?? ""}`}
                        id={`agent-${a.agent}-${b.interval}`}
                        name={a.agent}
                        window={`${b.interval}, ${b.mode}${b.workspace_id ? `, ${workspaces.find((w) => w.id === b.workspace_id)?.name ?? b.workspace_id}` : ", organisation-wide"}`}
                        limit={b.limit_usd}
                        spent={b.interval === "monthly" && !b.workspace_id ? a.spend_this_month : null}
                      />
                    ))}
                  </ul>
                )}
              </section>
              <section class="card" aria-labelledby="key-ceilings-heading">
                <h3 id="key-ceilings-heading">Key ceilings</h3>
                {ceilings.length === 0 ? (
                  <p class="hint">No key has a spend ceiling.</p>
                ) : (
                  <ul class="plain meters" data-testid="key-ceilings">
                    {ceilings.map((k) => (
                      <SpendMeter
                        key={k.hash}
                        id={`key-${k.hash.slice(0, 12)}`}
                        name={k.name ?? k.prefix}
                        window={`${k.limit_reset ?? "lifetime"}, ${k.limit_mode}${k.paused ? ", paused" : ""}`}
                        limit={k.limit ?? 0}
                        spent={k.usage}
                      />
                    ))}
                  </ul>
                )}
              </section>
            </>
          );
        }}
      </Show>
    </section>
  );
}
