import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { queryOf } from "../paging/query-params";
import { addSums, EMPTY_SUMS, renderTotals, summaryPeriods } from "./totals";
import { dailySums } from "./totals-queries";
import { activity } from "@router/management-api";

const summaryQuery = activity.summaryQuery;

export function totalsRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();

  /**
   * `{"data": {"current", "prior", "daily"}}`: the current period, the prior period of equal length,
   * and the current period day by day (every day, oldest first), all from one read of the daily totals.
   */
  router.get("/v1/activity/summary", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const q = parseInput(summaryQuery, queryOf(req.query), "");
    const periods = summaryPeriods(deps.clock.now(), q.days);
    const today = periods.currentDays[periods.currentDays.length - 1] ?? periods.priorEnd;
    const byDay = await dailySums(deps.db, identity.orgId, { from: periods.priorStart, to: today }, q.workspace);

    let prior = EMPTY_SUMS;
    for (const [day, sums] of byDay) if (day <= periods.priorEnd) prior = addSums(prior, sums);
    let current = EMPTY_SUMS;
    const daily = periods.currentDays.map((date) => {
      const sums = byDay.get(date) ?? EMPTY_SUMS;
      current = addSums(current, sums);
      return { date, ...renderTotals(sums) };
    });
    res.json({ data: { current: renderTotals(current), prior: renderTotals(prior), daily } });
  });

  return router;
}
