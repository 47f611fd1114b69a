import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, query } from "../api/client";
import type { KeyRow, RequestDetail, RequestRecord, Summary } from "../api/types";
import { ErrorNotice, Loading, Show, useAction, useLoad } from "../ui/async";
import { change, number, when } from "../ui/format";
import { Money } from "../ui/money";
import type { Abilities } from "./abilities";
import { BreakdownPanel } from "./breakdown-panel";
import { SpendChart } from "./spend-chart";

const PERIODS = [7, 30, 90] as const;

/** The link of one request's own page. */
export const requestHref = (id: string): string => `#activity/requests/${encodeURIComponent(id)}`;

/**
 * What a request cost, as the API gives it: the provider's charge at list price (`list_cost`, paid
 * on the organisation's own provider key) and Router's fee (`fee`), apart; a record from before the
 * API carried them has only the billed amount (`total_cost`).
 */
interface CostFields {
  total_cost: number;
  list_cost?: number | null;
  fee?: number | null;
}
const hasSplitCost = (r: CostFields): boolean => typeof r.list_cost === "number" || typeof r.fee === "number";

/** Totals of the period against the prior one, and the day-by-day charts of both. */
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
              <dt>Spend (list price)</dt>
              <dd>
                <Money value={period.current.spend} testId="total-spend" />
              </dd>
              <dd class="hint">{change(period.current.spend, period.prior.spend)}</dd>
              {typeof period.current.fees === "number" && (
                <dd class="hint">
                  Router's fees: <Money value={period.current.fees} testId="total-fees" />
                </dd>
              )}
            </div>
            <div>
              <dt>Requests</dt>
              <dd data-testid="total-requests">{number(period.current.requests)}</dd>
              <dd class="hint">{change(period.current.requests, period.prior.requests)}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd>{number(period.current.errors)}</dd>
              <dd class="hint">{period.current.requests > 0 ? `${Math.round((period.current.errors / period.current.requests) * 1000) / 10}% of requests` : "no requests"}</dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd>{number(period.current.tokens)}</dd>
              <dd class="hint">{change(period.current.tokens, period.prior.tokens)}</dd>
            </div>
          </dl>
          <div class="chart-grid">
            <SpendChart current={current} prior={prior} measure="spend" />
            <SpendChart current={current} prior={prior} measure="requests" />
          </div>
        </>
      )}
    </Show>
  );
}

/** `#activity/requests/{id}`: one request, its cost and its dispatches, on a page (and a link) of its own. */
function RequestPage({ id }: { id: string }) {
  const load = useLoad(() => api.get<RequestDetail & CostFields & { usage_lines?: Array<{ kind: string; tokens: number; cost: number; price_per_million: number }> }>(`/v1/activity/requests/${encodeURIComponent(id)}`), [id]);
  return (
    <section aria-labelledby="request-heading">
      <p>
        <a href="#activity">← Activity</a>
      </p>
      <h2 id="request-heading" class="wrap">
        Request {id}
      </h2>
      <Show load={load} what="the request">
        {(r) => {
          const listPrice = (r.usage_lines ?? []).reduce((s, l) => s + l.cost, 0);
          return (
            <>
              <div class="card">
                <dl class="facts">
                  <dt>When</dt>
                  <dd>{when(r.created_at)}</dd>
                  <dt>Model</dt>
                  <dd>
                    {r.requested_model}
                    {r.served_model && r.served_model !== r.requested_model ? ` → ${r.served_model}` : ""}
                  </dd>
                  <dt>Provider</dt>
                  <dd>{r.provider_slug ?? "none"}</dd>
                  <dt>Status</dt>
                  <dd>{r.status}</dd>
                  {hasSplitCost(r) ? (
                    <>
                      <dt>Provider's charge (list price)</dt>
                      <dd>
                        <Money value={r.list_cost ?? 0} testId="request-list-price" />
                        {r.is_byok ? " (paid on your provider key)" : ""}
                      </dd>
                      <dt>Router's fee</dt>
                      <dd>
                        <Money value={r.fee ?? 0} testId="request-fee" />
                      </dd>
                    </>
                  ) : (
                    <>
                      <dt>Provider's charge (list price)</dt>
                      <dd>
                        <Money value={listPrice} testId="request-list-price" />
                        {r.is_byok ? " (paid on your provider key)" : ""}
                      </dd>
                      <dt>Billed by Router</dt>
                      <dd>
                        <Money value={r.total_cost} testId="request-billed" />
                      </dd>
                    </>
                  )}
                  <dt>Key</dt>
                  <dd>{r.key ? (r.key.name ?? r.key.hash.slice(0, 12)) : "none"}</dd>
                  <dt>App</dt>
                  <dd>{r.app_title || r.app_id || "none named"}</dd>
                  <dt>Agent</dt>
                  <dd>{r.agent || "none named"}</dd>
                  {r.error_message && (
                    <>
                      <dt>Error</dt>
                      <dd>
                        {r.error_code}: {r.error_message}
                      </dd>
                    </>
                  )}
                </dl>
              </div>
              {r.usage_lines && r.usage_lines.length > 0 && (
                <>
                  <h3>Usage at list price</h3>
                  <div class="scroll" tabIndex={0}>
                    <table data-testid="usage-lines">
                      <thead>
                        <tr>
                          <th scope="col">Kind</th>
                          <th scope="col">Tokens</th>
                          <th scope="col">Price per million</th>
                          <th scope="col">Cost</th>
                        </tr>
                      </thead>
                      <tbody>
                        {r.usage_lines.map((l) => (
                          <tr key={l.kind}>
                            <td>{l.kind}</td>
                            <td>{number(l.tokens)}</td>
                            <td>
                              <Money value={l.price_per_million} />
                            </td>
                            <td>
                              <Money value={l.cost} />
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                </>
              )}
              <h3>Dispatches</h3>
              <div class="scroll" tabIndex={0}>
                <table data-testid="dispatches">
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
          );
        }}
      </Show>
    </section>
  );
}

/** The request list's filters, as the API's query parameters name them. */
export interface Filters {
  model: string;
  provider: string;
  status: string;
  key: string;
  app: string;
  agent: string;
}

const NO_FILTERS: Filters = { model: "", provider: "", status: "", key: "", app: "", agent: "" };
const keyName = (r: RequestRecord): string => (r.key ? (r.key.name ?? `${r.key.hash.slice(0, 12)}…`) : "none");

function RecentRequests({ days, filters, setFilters }: { days: number; filters: Filters; setFilters: (f: Filters) => void }) {
  const [draft, setDraft] = useState<Filters>(filters);
  // A breakdown line picked above sets the filters: the form shows them. Only a change does: on the
  // first render the draft already holds them, and resetting it then would throw away what someone
  // typed before the effect ran.
  const shown = useRef(filters);
  useEffect(() => {
    if (shown.current === filters) return;
    shown.current = filters;
    setDraft(filters);
  }, [filters]);
  const [extra, setExtra] = useState<Array<RequestRecord & CostFields>>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const more = useAction();
  // The key filter offers the organisation's keys by name; the API filters by hash.
  const keys = useLoad(() => api.get<KeyRow[]>("/v1/keys").catch(() => [] as KeyRow[]), []);
  const load = useLoad(async () => {
    const page = await call<Array<RequestRecord & CostFields>>("GET", `/v1/activity${query({ limit: 25, days, include: "key", ...filters })}`);
    setExtra([]);
    setCursor(page.next_cursor ?? null);
    return page.data;
  }, [days, filters]);
  const loadMore = () =>
    more.run(async () => {
      const page = await call<Array<RequestRecord & CostFields>>("GET", `/v1/activity${query({ limit: 25, days, include: "key", ...filters, cursor })}`);
      setExtra((rows) => [...rows, ...page.data]);
      setCursor(page.next_cursor ?? null);
    });
  const field = (name: Exclude<keyof Filters, "key">, label: string, placeholder: string) => (
    <div class="field">
      <label for={`filter-${name}`}>{label}</label>
      <input id={`filter-${name}`} value={draft[name]} placeholder={placeholder} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })} />
    </div>
  );
  return (
    <section aria-labelledby="requests-heading" id="recent-requests">
      <h3 id="requests-heading" tabIndex={-1}>
        Recent requests
      </h3>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        {field("model", "Model", "openai/gpt-4o-mini")}
        {field("provider", "Provider", "openai")}
        <div class="field">
          <label for="filter-key">Key</label>
          <select id="filter-key" value={draft.key} onChange={(e) => setDraft({ ...draft, key: e.currentTarget.value })}>
            <option value="">Any key</option>
            {/* A key picked in the breakdown that is not an inference key of the list (a dashboard session's charge). */}
            {draft.key && !(keys.data ?? []).some((k) => k.hash === draft.key) && (
              <option value={draft.key}>{draft.key.startsWith("dashboard:") ? "Dashboard (a signed-in person)" : `${draft.key.slice(0, 12)}…`}</option>
            )}
            {(keys.data ?? [])
              .filter((k) => k.class === "inference")
              .map((k) => (
                <option key={k.hash} value={k.hash}>
                  {k.name ?? k.prefix}
                </option>
              ))}
          </select>
        </div>
        {field("app", "App id", "app_console")}
        {field("agent", "Agent", "planner")}
        {field("status", "Status", "complete")}
        <div class="filter-actions">
          <button type="submit">Filter</button>
          <button
            type="button"
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <Show load={load} what="requests">
        {(rows) => {
          const all = [...rows, ...extra];
          const split = all.some(hasSplitCost);
          return all.length === 0 ? (
            <p>No requests in this window.</p>
          ) : (
            <div class="scroll" tabIndex={0}>
              <table data-testid="requests">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Model</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Key</th>
                    <th scope="col">App</th>
                    <th scope="col">Status</th>
                    {split ? (
                      <>
                        <th scope="col">Provider (list)</th>
                        <th scope="col">Router fee</th>
                      </>
                    ) : (
                      <th scope="col">Billed</th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {all.map((r) => (
                    <tr key={r.id}>
                      <td>
                        <a href={requestHref(r.id)} aria-label={`${when(r.created_at)}: open request ${r.id}`}>
                          {when(r.created_at)}
                        </a>
                      </td>
                      <td>{r.served_model ?? r.requested_model}</td>
                      <td>{r.provider_slug ?? ""}</td>
                      <td>{keyName(r)}</td>
                      <td>{r.app_title || r.app_id || ""}</td>
                      <td>{r.error_code ? `${r.status} (${r.error_code})` : r.status}</td>
                      {split ? (
                        <>
                          <td>
                            <Money value={r.list_cost ?? 0} />
                          </td>
                          <td>
                            <Money value={r.fee ?? 0} />
                          </td>
                        </>
                      ) : (
                        <td>
                          <Money value={r.total_cost} />
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        }}
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

/**
 * Spend and requests over time (charts with axes and values on hover), the period broken down by
 * model, provider, key, app or agent, recent requests with filters and links to each request's
 * page, and the CSV export. `path` is the rest of the URL fragment (`requests/{id}`).
 */
export function ActivitySection({ can, path }: { can: Abilities; path: string[] }) {
  const [days, setDays] = useState<number>(30);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const month = new Date().toISOString().slice(0, 7);
  if (path[0] === "requests" && path[1]) return <RequestPage id={decodeURIComponent(path[1])} />;
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
      <BreakdownPanel
        days={days}
        onPick={(filter, value) => {
          setFilters({ ...NO_FILTERS, [filter]: value });
          // To the list, with the focus on its heading, so a keyboard or screen reader follows.
          requestAnimationFrame(() => document.getElementById("requests-heading")?.focus());
        }}
      />
      <RecentRequests days={days} filters={filters} setFilters={setFilters} />
    </section>
  );
}
