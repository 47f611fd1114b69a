import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db, Queryable } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import { toUsd, type Clock } from "@router/money";
import { queryOf } from "../paging/query-params";
import { summaryPeriods } from "./totals";
import { activity } from "@router/management-api";

/**
 * What a breakdown groups by: the column that names a group, and the one that labels it (a key's
 * name, an app's title). A request with no value (no app, no agent) is its own group, `value: null`.
 */
const DIMENSIONS = {
  model: { value: "coalesce(served_model, requested_model)", label: "NULL" },
  provider: { value: "provider_slug", label: "NULL" },
  key: { value: "key_hash", label: "max(key_name)" },
  app: { value: "app_id", label: "max(app_title)" },
  agent: { value: "agent", label: "NULL" },
} as const;

export type BreakdownDimension = keyof typeof DIMENSIONS;

const breakdownQuery = activity.breakdownQuery;

type Int8 = bigint | string | number;

interface GroupDayRow {
  value: string | null;
  label: string | null;
  date: string;
  requests: Int8;
  errors: Int8;
  spend_nanodollars: Int8;
  tokens: Int8;
}

/** One group's sums, over the period and day by day. */
export interface GroupSums {
  value: string | null;
  label: string | null;
  requests: bigint;
  errors: bigint;
  spend: bigint;
  tokens: bigint;
  /** By UTC day (`YYYY-MM-DD`), only the days that have any. */
  byDay: Map<string, { requests: bigint; spend: bigint }>;
}

const emptyGroup = (value: string | null, label: string | null): GroupSums => ({ value, label, requests: 0n, errors: 0n, spend: 0n, tokens: 0n, byDay: new Map() });

function addInto(sum: GroupSums, day: string, requests: bigint, errors: bigint, spend: bigint, tokens: bigint): void {
  sum.requests += requests;
  sum.errors += errors;
  sum.spend += spend;
  sum.tokens += tokens;
  const d = sum.byDay.get(day) ?? { requests: 0n, spend: 0n };
  sum.byDay.set(day, { requests: d.requests + requests, spend: d.spend + spend });
}

/**
 * The biggest groups of the organisation's requests since `since` by `by`, most spend first (then
 * most requests), with `others` summing the rest; each with its UTC days. Spend is at list price,
 * as the summary's.
 */
export async function breakdown(
  db: Queryable,
  orgId: string,
  q: { by: BreakdownDimension; since: Date; workspaceId: string | undefined; limit: number },
): Promise<{ groups: GroupSums[]; others: GroupSums | null }> {
  const dim = DIMENSIONS[q.by];
  const params: unknown[] = [orgId, q.since];
  const workspace = q.workspaceId === undefined ? "" : `AND workspace_id = $${params.push(q.workspaceId)}`;
  // The dimension's SQL comes from the fixed table above, never from the query string.
  const r = await db.query<GroupDayRow>(
    `SELECT ${dim.value} AS value, ${dim.label} AS label, to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS date,
       count(*)::bigint AS requests,
       count(*) FILTER (WHERE error_code IS NOT NULL)::bigint AS errors,
       sum(list_cost_nanodollars)::bigint AS spend_nanodollars,
       sum(prompt_tokens + completion_tokens)::bigint AS tokens
     FROM requests
     WHERE org_id = $1 AND created_at >= $2 ${workspace}
     GROUP BY 1, 3`,
    params,
  );
  const byValue = new Map<string | null, GroupSums>();
  for (const row of r.rows) {
    const sum = byValue.get(row.value) ?? emptyGroup(row.value, null);
    sum.label ??= row.label;
    addInto(sum, row.date, BigInt(row.requests), BigInt(row.errors), BigInt(row.spend_nanodollars), BigInt(row.tokens));
    byValue.set(row.value, sum);
  }
  const sorted = [...byValue.values()].sort(
    (a, b) =>
      Number(b.spend - a.spend) || Number(b.requests - a.requests) || (a.value === null ? 1 : b.value === null ? -1 : a.value.localeCompare(b.value)),
  );
  const groups = sorted.slice(0, q.limit);
  const rest = sorted.slice(q.limit);
  if (rest.length === 0) return { groups, others: null };
  const others = emptyGroup(null, null);
  for (const g of rest) for (const [day, d] of g.byDay) addInto(others, day, d.requests, 0n, d.spend, 0n);
  for (const g of rest) {
    others.errors += g.errors;
    others.tokens += g.tokens;
  }
  return { groups, others };
}

function renderGroup(g: GroupSums, days: string[] | null) {
  return {
    value: g.value,
    label: g.label,
    requests: Number(g.requests),
    errors: Number(g.errors),
    spend: toUsd(g.spend),
    spend_nanodollars: g.spend.toString(),
    tokens: Number(g.tokens),
    // Every day of the period, oldest first, as the summary's `daily`.
    ...(days ? { daily: days.map((date) => ({ date, requests: Number(g.byDay.get(date)?.requests ?? 0n), spend: toUsd(g.byDay.get(date)?.spend ?? 0n) })) } : {}),
  };
}

/**
 * `GET /v1/activity/breakdown?by=model|provider|key|app|agent`: the summary's current period (the
 * same whole UTC days, `days` and `workspace` as `/v1/activity/summary`) split by one dimension.
 */
export function breakdownRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();
  router.get("/v1/activity/breakdown", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const q = parseInput(breakdownQuery, queryOf(req.query), "");
    const days = summaryPeriods(deps.clock.now(), q.days).currentDays;
    const since = new Date(`${days[0]}T00:00:00.000Z`);
    const { groups, others } = await breakdown(deps.db, identity.orgId, { by: q.by, since, workspaceId: q.workspace, limit: q.limit });
    const daily = q.daily ? days : null;
    res.json({ data: { by: q.by, days: q.days, groups: groups.map((g) => renderGroup(g, daily)), others: others ? renderGroup(others, daily) : null } });
  });
  return router;
}
