import { useState } from "preact/hooks";
import { api, call, query } from "../api/client";
import type { RequestDetail, RequestRecord, Summary } from "../api/types";
import { ErrorNotice, Loading, Show, useAction, useLoad } from "../ui/async";
import { change, money, number, when } from "../ui/format";
import type { Abilities } from "./abilities";
import { SpendChart } from "./spend-chart";

const PERIODS = [7, 30, 90] as const;

/** Totals of the period against the prior one, and the day-by-day chart of both. */
function Overview({ days }: { days: number }) {
  // The summary's `daily` covers its own window: asking for twice the days gives the prior period's days too.
  const load = useLoad(async () => {
    const [period, both] = await Promise.all([
      api.get<Summary>(`/v1/activity/summary${query({ days })}`),
      api.get<Summary>(`/v1/activity/summary${query({ days: days * 2 })}`),
    ]);
    return { period, prior: both.daily.slice(0, both.daily.length - period.daily.length), current: period.daily };
  }, [days]);
  return (
    <Show load={load} what="spend and requests">
      {({ period, prior, current }) => (
        <>
          <dl class="tiles">
            <div>
              <dt>Spend</dt>
              <dd data-testid="total-spend">{money(period.current.spend)}</dd>
              <dd class="hint">{change(period.current.spend, period.prior.spend)}</dd>
            </div>
            <div>
              <dt>Requests</dt>
              <dd data-testid="total-requests">{number(period.current.requests)}</dd>
              <dd class="hint">{change(period.current.requests, period.prior.requests)}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd>{number(period.current.errors)}</dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd>{number(period.current.tokens)}</dd>
            </div>
          </dl>
          <SpendChart current={current} prior={prior} measure="spend" />
          <SpendChart current={current} prior={prior} measure="requests" />
        </>
      )}
    </Show>
  );
}

function RequestDetailView({ id, onClose }: { id: string; onClose: () => void }) {
  const load = useLoad(() => api.get<RequestDetail>(`/v1/activity/requests/${encodeURIComponent(id)}`), [id]);
  return (
    <section class="card" aria-labelledby="request-heading">
      <h3 id="request-heading">Request {id}</h3>
      <Show load={load} what="the request">
        {(r) => (
          <>
            <dl class="facts">
              <dt>When</dt>
              <dd>{when(r.created_at)}</dd>
              <dt>Model</dt>
              <dd>
                {r.requested_model}
                {r.served_model && r.served_model !== r.requested_model ? ` → ${r.served_model}` : ""}
              </dd>
              <dt>Status</dt>
              <dd>{r.status}</dd>
              <dt>Cost</dt>
              <dd>{money(r.total_cost)}</dd>
              <dt>Key</dt>
              <dd>{r.key ? (r.key.name ?? r.key.hash.slice(0, 12)) : "none"}</dd>
              {r.error_message && (
                <>
                  <dt>Error</dt>
                  <dd>
                    {r.error_code}: {r.error_message}
                  </dd>
                </>
              )}
            </dl>
            <h4>Dispatches</h4>
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Model</th>
                    <th scope="col">Status</th>
                    <th scope="col">HTTP</th>
                    <th scope="col">Time</th>
                  </tr>
                </thead>
                <tbody>
                  {r.attempts.map((a) => (
                    <tr key={a.id}>
                      <td>{a.attempt}</td>
                      <td>
                        {a.provider_slug}
                        {a.is_byok ? " (your key)" : ""}
                      </td>
                      <td>{a.model_id}</td>
                      <td>{a.status === "ok" ? "ok" : `${a.status}${a.error_code ? `: ${a.error_code}` : ""}`}</td>
                      <td>{a.http_status ?? ""}</td>
                      <td>{a.duration_ms === null ? "" : `${a.duration_ms} ms`}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Show>
      <button type="button" onClick={onClose}>
        Close request
      </button>
    </section>
  );
}

interface Filters {
  model: string;
  provider: string;
  status: string;
}

function RecentRequests({ days }: { days: number }) {
  const [draft, setDraft] = useState<Filters>({ model: "", provider: "", status: "" });
  const [filters, setFilters] = useState<Filters>(draft);
  const [extra, setExtra] = useState<RequestRecord[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [open, setOpen] = useState<string>();
  const more = useAction();
  const load = useLoad(async () => {
    const page = await call<RequestRecord[]>("GET", `/v1/activity${query({ limit: 25, days, ...filters })}`);
    setExtra([]);
    setCursor(page.next_cursor ?? null);
    return page.data;
  }, [days, filters]);
  const loadMore = () =>
    more.run(async () => {
      const page = await call<RequestRecord[]>("GET", `/v1/activity${query({ limit: 25, days, ...filters, cursor })}`);
      setExtra((rows) => [...rows, ...page.data]);
      setCursor(page.next_cursor ?? null);
    });
  const field = (name: keyof Filters, label: string, placeholder: string) => (
    <div class="field">
      <label for={`filter-${name}`}>{label}</label>
      <input id={`filter-${name}`} value={draft[name]} placeholder={placeholder} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })} />
    </div>
  );
  return (
    <section aria-labelledby="requests-heading">
      <h3 id="requests-heading">Recent requests</h3>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        {field("model", "Model", "openai/gpt-4o-mini")}
        {field("provider", "Provider", "openai")}
        {field("status", "Status", "complete")}
        <button type="submit">Filter</button>
      </form>
      {open && <RequestDetailView id={open} onClose={() => setOpen(undefined)} />}
      <Show load={load} what="requests">
        {(rows) =>
          rows.length === 0 ? (
            <p>No requests in this window.</p>
          ) : (
            <div class="scroll">
              <table data-testid="requests">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Model</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Status</th>
                    <th scope="col">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {[...rows, ...extra].map((r) => (
                    <tr key={r.id}>
                      <td>
                        <button type="button" class="link" onClick={() => setOpen(r.id)} aria-label={`${when(r.created_at)}: open request ${r.id}`}>
                          {when(r.created_at)}
                        </button>
                      </td>
                      <td>{r.served_model ?? r.requested_model}</td>
                      <td>{r.provider_slug ?? ""}</td>
                      <td>{r.error_code ? `${r.status} (${r.error_code})` : r.status}</td>
                      <td>{money(r.total_cost)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      <ErrorNotice error={more.error} />
      {more.busy && <Loading what="more requests" />}
      {cursor && (
        <button type="button" disabled={more.busy} onClick={() => void loadMore()}>
          Load more
        </button>
      )}
    </section>
  );
}

/** Spend and requests over time, recent requests with filters, one request's dispatches, the CSV export. */
export function ActivitySection({ can }: { can: Abilities }) {
  const [days, setDays] = useState<number>(30);
  const month = new Date().toISOString().slice(0, 7);
  return (
    <section aria-labelledby="activity-heading">
      <div class="section-head">
        <h2 id="activity-heading">Activity</h2>
        <div class="field inline">
          <label for="period">Period</label>
          <select id="period" value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {PERIODS.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </div>
        {can.exportUsage && (
          <a class="button" href={`/v1/activity/export${query({ month })}`} download>
            Export {month} as CSV
          </a>
        )}
      </div>
      <Overview days={days} />
      <RecentRequests days={days} />
    </section>
  );
}
