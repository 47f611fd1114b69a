import { useState } from "preact/hooks";
import { api, query } from "../api/client";
import type { Run, RunStatus, RunTree } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { money, number, when } from "../ui/format";
import type { Abilities } from "./abilities";
import { Table } from "../ui/table";

const STATUSES: RunStatus[] = ["open", "paused", "completed", "exhausted", "cancelled"];
const percent = (rate: number | null) => (rate === null ? "none" : `${Math.round(rate * 100)}%`);

/** Close (as completed or cancelled) and resume, for the statuses the API's state table moves. */
function RunActions({ run, onChanged }: { run: Run; onChanged: () => void }) {
  const action = useAction();
  const act = (path: string, body: unknown) => void action.run(async () => void (await api.post(`/v1/runs/${run.id}/${path}`, body))).then((ok) => ok && onChanged());
  const live = run.status === "open" || run.status === "paused";
  if (!live) return null;
  return (
    <div class="row-actions">
      {run.status === "paused" && (
        <button type="button" class="primary" disabled={action.busy} onClick={() => act("resume", {})}>
          Resume run
        </button>
      )}
      <button type="button" disabled={action.busy} onClick={() => act("close", { status: "completed" })}>
        Close as completed
      </button>
      <button type="button" class="danger" disabled={action.busy} onClick={() => act("close", { status: "cancelled" })}>
        Cancel run
      </button>
      <ErrorNotice error={action.error} />
    </div>
  );
}

/** One run: its limits and use, then its tree of turns in order. */
function RunDetail({ id, can, onChanged, onClose }: { id: string; can: Abilities; onChanged: () => void; onClose: () => void }) {
  const load = useLoad(() => api.get<RunTree>(`/v1/runs/${encodeURIComponent(id)}`), [id]);
  return (
    <section class="card" aria-labelledby="run-heading">
      <h3 id="run-heading">Run {id}</h3>
      <Show load={load} what="the run">
        {(r) => (
          <>
            <dl class="facts">
              <dt>Status</dt>
              <dd data-testid="run-status">
                {r.status}
                {r.pause_reason ? ` (${r.pause_reason.replace("_", " ")}, since ${when(r.paused_at)})` : ""}
              </dd>
              <dt>Goal</dt>
              <dd>{r.goal ?? "none given"}</dd>
              <dt>Budget</dt>
              <dd>
                {money(r.budget)}: spent {money(r.spent)}, held {money(r.reserved)}, {money(r.remaining)} left
              </dd>
              <dt>Turns</dt>
              <dd>
                {number(r.turns_used)}
                {r.max_turns === null ? "" : ` of ${number(r.max_turns)}`}
              </dd>
              <dt>Tool calls</dt>
              <dd>
                {number(r.tool_calls_used)}
                {r.max_tool_calls === null ? "" : ` of ${number(r.max_tool_calls)}`}; {number(r.tree.failed_tool_calls)} failed
              </dd>
              <dt>Cache hit rate</dt>
              <dd>{percent(r.tree.cache_hit_rate)}</dd>
              <dt>Model switches</dt>
              <dd>{number(r.tree.model_switches)}</dd>
            </dl>
            {can.configure && (
              <RunActions
                run={r}
                onChanged={() => {
                  load.reload();
                  onChanged();
                }}
              />
            )}
            <h4>Turns</h4>
            {r.tree.turns.length === 0 ? (
              <p class="hint">No turn yet.</p>
            ) : (
              <Table headers={["Turn", "Status", "Model", "Cost", "Tool calls", "Cache hits", "Request"]} caption="Each turn is a chat completion that named this run." testId="run-turns">
                {r.tree.turns.map((t) => (
                  <tr key={t.turn}>
                    <td>{t.turn}</td>
                    <td>{t.status}</td>
                    <td>
                      {t.model ?? "none"}
                      {t.model_switch ? " (switched)" : ""}
                    </td>
                    <td>{money(t.cost)}</td>
                    <td>
                      {t.tool_calls}
                      {t.failed_tool_calls ? ` (${t.failed_tool_calls} failed)` : ""}
                    </td>
                    <td>{percent(t.cache_hit_rate)}</td>
                    <td>
                      <code>{t.request_id}</code>
                    </td>
                  </tr>
                ))}
              </Table>
            )}
          </>
        )}
      </Show>
      <button type="button" onClick={onClose}>
        Close details
      </button>
    </section>
  );
}

/** Agent runs, newest first: what each has spent of its budget; open one for its tree, close or resume it. */
export function RunsSection({ can }: { can: Abilities }) {
  const [status, setStatus] = useState<RunStatus | "">("");
  const [open, setOpen] = useState<string>();
  const load = useLoad(() => api.get<Run[]>(`/v1/runs${query({ status, limit: 100 })}`), [status]);
  return (
    <section aria-labelledby="runs-heading">
      <div class="section-head">
        <h2 id="runs-heading">Runs</h2>
        <div class="field inline">
          <label for="run-status-filter">Status</label>
          <select id="run-status-filter" value={status} onChange={(e) => setStatus(e.currentTarget.value as RunStatus | "")}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </div>
      </div>
      <p class="hint">An agent opens a run with its inference key (POST /v1/runs) and names it on each chat completion (run_id).</p>
      {open && <RunDetail key={open} id={open} can={can} onChanged={load.reload} onClose={() => setOpen(undefined)} />}
      <Show load={load} what="runs">
        {(runs) =>
          runs.length === 0 ? (
            <p class="hint">No runs{status ? ` ${status}` : ""}.</p>
          ) : (
            <Table headers={["Run", "Goal", "Status", "Spent of budget", "Turns", "Opened"]} testId="runs">
              {runs.map((r) => (
                <tr key={r.id}>
                  <td>
                    <button type="button" class="link" onClick={() => setOpen(r.id)} aria-label={`open run ${r.id}`}>
                      {r.id}
                    </button>
                  </td>
                  <td>{r.goal ?? ""}</td>
                  <td>
                    {r.status}
                    {r.pause_reason ? ` (${r.pause_reason.replace("_", " ")})` : ""}
                  </td>
                  <td>
                    {money(r.spent)} of {money(r.budget)}
                  </td>
                  <td>{number(r.turns_used)}</td>
                  <td>{when(r.created_at)}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
    </section>
  );
}
