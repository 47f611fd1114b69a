import { useState } from "preact/hooks";
import { api, query } from "../api/client";
import type { ClientReport, ReportLine, WorkspaceRow } from "../api/types";
import { Show, useLoad } from "../ui/async";
import { money, number, when } from "../ui/format";
import { Table } from "../ui/table";

const thisMonth = () => new Date().toISOString().slice(0, 7);

function Breakdown({ caption, rows }: { caption: string; rows: Array<ReportLine & { name: string }> }) {
  return (
    <Table headers={["Name", "Requests", "Tokens", "Spend (list price)"]} caption={caption}>
      {rows.map((r) => (
        <tr key={r.name}>
          <td>{r.name}</td>
          <td>{number(r.requests)}</td>
          <td>{number(r.total_tokens)}</td>
          <td>{money(r.spend)}</td>
        </tr>
      ))}
    </Table>
  );
}

function Report({ workspace, month }: { workspace: string; month: string }) {
  const load = useLoad(() => api.get<ClientReport>(`/v1/reports/workspaces/${encodeURIComponent(workspace)}${query({ month })}`), [workspace, month]);
  return (
    <Show load={load} what="the report">
      {(r) => (
        <article class="card printable" aria-labelledby="report-heading" data-testid="client-report">
          {/* The API stored it only as a PNG or JPEG data URI it checked; the page's policy allows data: images. */}
          {r.branding.brand_logo && <img class="report-logo" src={r.branding.brand_logo} alt={`${r.branding.brand_name ?? r.branding.org_name ?? "Brand"} logo`} />}
          <h3 id="report-heading">
            {r.branding.brand_name ?? r.branding.org_name}: {r.workspace.name}, {r.month}
            {r.period.ended ? "" : " (so far)"}
          </h3>
          <p class="hint">
            Usage at list price for {r.month} (UTC), generated {when(r.generated_at)}.
          </p>
          <div class="actions screen-only">
            {/* The print stylesheet leaves only this report on the page: no navigation, forms or buttons. */}
            <button type="button" onClick={() => window.print()}>
              Print report
            </button>
          </div>
          <dl class="tiles">
            <div>
              <dt>Requests</dt>
              <dd data-testid="report-requests">{number(r.totals.requests)}</dd>
            </div>
            <div>
              <dt>Spend (list price)</dt>
              <dd>{money(r.totals.spend)}</dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd>{number(r.totals.total_tokens)}</dd>
            </div>
          </dl>
          <Breakdown caption="By model" rows={r.by_model.map((m) => ({ ...m, name: m.model ?? "no model served" }))} />
          <Breakdown caption="By agent" rows={r.by_agent.map((a) => ({ ...a, name: a.agent ?? "no agent named" }))} />
          {r.branding.brand_footer && <p class="hint">{r.branding.brand_footer}</p>}
        </article>
      )}
    </Show>
  );
}

/** A client's month: one workspace is one client; the month is a usage report at list price, not an invoice. */
export function ClientMonthPanel() {
  const workspaces = useLoad(() => api.get<WorkspaceRow[]>("/v1/workspaces"), []);
  const [workspace, setWorkspace] = useState("");
  const [month, setMonth] = useState(thisMonth());
  const [shown, setShown] = useState<{ workspace: string; month: string }>();
  return (
    <section aria-labelledby="client-month-heading">
      <h3 id="client-month-heading" class="screen-only">
        A client's month
      </h3>
      <Show load={workspaces} what="workspaces">
        {(rows) =>
          rows.length === 0 ? (
            <p class="hint">Create a workspace per client first: requests made with its keys make up its report.</p>
          ) : (
            <form
              class="card inline-form"
              onSubmit={(e) => {
                e.preventDefault();
                setShown({ workspace: workspace || (rows[0]?.id ?? ""), month });
              }}
            >
              <div class="field">
                <label for="report-workspace">Client (workspace)</label>
                <select id="report-workspace" value={workspace || rows[0]?.id} onChange={(e) => setWorkspace(e.currentTarget.value)}>
                  {rows.map((w) => (
                    <option key={w.id} value={w.id}>
                      {w.name}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="report-month">Month (YYYY-MM, UTC)</label>
                <input id="report-month" value={month} onInput={(e) => setMonth(e.currentTarget.value)} />
              </div>
              <button type="submit" class="primary">
                Show report
              </button>
            </form>
          )
        }
      </Show>
      {shown && <Report key={`${shown.workspace}-${shown.month}`} workspace={shown.workspace} month={shown.month} />}
    </section>
  );
}
