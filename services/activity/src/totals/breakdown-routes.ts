import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db, Queryable } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import { toNanos, toUsd, type Clock } from "@router/money";
import { z } from "zod";
import { intParam, MAX_DAYS, queryOf, workspaceFilter } from "../paging/query-params";
import { summaryPeriods } from "./totals";
import { DEFAULT_SUMMARY_DAYS } from "./totals-routes";

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

const DEFAULT_GROUPS = 10;
const MAX_GROUPS = 100;

const breakdownQuery = z.object({
  by: z.enum(Object.keys(DIMENSIONS) as [BreakdownDimension, ...BreakdownDimension[]], { error: "must be one of model, provider, key, app, agent" }),
  days: intParam(1, MAX_DAYS).default(DEFAULT_SUMMARY_DAYS),
  workspace: workspaceFilter,
  limit: intParam(1, MAX_GROUPS).default(DEFAULT_GROUPS),
});

type Int8 = bigint | string | number;

interface GroupRow {
  value: string | null;
  label: string | null;
  requests: Int8;
  errors: Int8;
  spend_nanodollars: Int8;
  tokens: Int8;
}

/**
 * The biggest groups of the organisation's requests since `since` by `by`, most spend first (then
 * most requests), with one row `others` summing the rest. Spend is at list price, as the summary's.
 */
export async function breakdown(
  db: Queryable,
  orgId: string,
  q: { by: BreakdownDimension; since: Date; workspaceId: string | undefined; limit: number },
): Promise<{ groups: GroupRow[]; others: GroupRow | null }> {
  const dim = DIMENSIONS[q.by];
  const params: unknown[] = [orgId, q.since];
  const workspace = q.workspaceId === undefined ? "" : `AND workspace_id = $${params.push(q.workspaceId)}`;
  // The dimension's SQL comes from the fixed table above, never from the query string.
  const r = await db.query<GroupRow>(
    `SELECT ${dim.value} AS value, ${dim.label} AS label, count(*)::bigint AS requests,
       count(*) FILTER (WHERE error_code IS NOT NULL)::bigint AS errors,
       sum(list_cost_nanodollars)::bigint AS spend_nanodollars,
       sum(prompt_tokens + completion_tokens)::bigint AS tokens
     FROM requests
     WHERE org_id = $1 AND created_at >= $2 ${workspace}
     GROUP BY 1
     ORDER BY spend_nanodollars DESC, requests DESC, value NULLS LAST`,
    params,
  );
  const groups = r.rows.slice(0, q.limit);
  const rest = r.rows.slice(q.limit);
  const others =
    rest.length === 0
      ? null
      : rest.reduce<GroupRow>(
          (sum, g) => ({
            value: null,
            label: null,
            requests: BigInt(sum.requests) + BigInt(g.requests),
            errors: BigInt(sum.errors) + BigInt(g.errors),
            spend_nanodollars: BigInt(sum.spend_nanodollars) + BigInt(g.spend_nanodollars),
            tokens: BigInt(sum.tokens) + BigInt(g.tokens),
          }),
          { value: null, label: null, requests: 0n, errors: 0n, spend_nanodollars: 0n, tokens: 0n },
        );
  return { groups, others };
}

function renderGroup(g: GroupRow) {
  return {
    value: g.value,
    label: g.label,
    requests: Number(g.requests),
    errors: Number(g.errors),
    spend: toUsd(toNanos(g.spend_nanodollars)),
    spend_nanodollars: toNanos(g.spend_nanodollars).toString(),
    tokens: Number(g.tokens),
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
    const first = summaryPeriods(deps.clock.now(), q.days).currentDays[0];
    const since = new Date(`${first}T00:00:00.000Z`);
    const { groups, others } = await breakdown(deps.db, identity.orgId, { by: q.by, since, workspaceId: q.workspace, limit: q.limit });
    res.json({ data: { by: q.by, days: q.days, groups: groups.map(renderGroup), others: others ? renderGroup(others) : null } });
  });
  return router;
}
