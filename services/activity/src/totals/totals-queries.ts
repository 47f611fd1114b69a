import type { Queryable } from "@router/db";
import { toNanos } from "@router/money";
import type { TotalsSums } from "./totals";

type Int8 = bigint | string | number;

interface DayRow {
  date: string;
  requests: Int8;
  errors: Int8;
  byok_requests: Int8;
  spend_nanodollars: Int8;
  fee_nanodollars: Int8;
  prompt_tokens: Int8;
  completion_tokens: Int8;
  cached_tokens: Int8;
}

/**
 * The organisation's totals for each UTC day from `from` to `to` (inclusive) that has any, summed
 * over its workspaces or for one workspace. Reads `daily_totals` through its primary key.
 */
export async function dailySums(
  db: Queryable,
  orgId: string,
  range: { from: string; to: string },
  workspaceId: string | undefined,
): Promise<Map<string, TotalsSums>> {
  const params: unknown[] = [orgId, range.from, range.to];
  const workspace = workspaceId === undefined ? "" : `AND workspace_key = $${params.push(workspaceId)}`;
  // Sums of bigint are numeric; cast back so both pg and PGlite hand over bigint.
  const r = await db.query<DayRow>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS date, sum(requests)::bigint AS requests, sum(errors)::bigint AS errors,
       sum(byok_requests)::bigint AS byok_requests, sum(spend_nanodollars)::bigint AS spend_nanodollars,
       sum(fee_nanodollars)::bigint AS fee_nanodollars, sum(prompt_tokens)::bigint AS prompt_tokens, sum(completion_tokens)::bigint AS completion_tokens,
       sum(cached_tokens)::bigint AS cached_tokens
     FROM daily_totals
     WHERE org_id = $1 AND day BETWEEN $2::date AND $3::date ${workspace}
     GROUP BY day`,
    params,
  );
  return new Map(
    r.rows.map((row) => [
      row.date,
      {
        requests: BigInt(row.requests),
        errors: BigInt(row.errors),
        byokRequests: BigInt(row.byok_requests),
        spend: toNanos(row.spend_nanodollars),
        fees: toNanos(row.fee_nanodollars),
        promptTokens: BigInt(row.prompt_tokens),
        completionTokens: BigInt(row.completion_tokens),
        cachedTokens: BigInt(row.cached_tokens),
      },
    ]),
  );
}
