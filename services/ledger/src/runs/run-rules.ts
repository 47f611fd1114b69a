import { z } from "zod";
import { fromUsd } from "@router/money";
import { MAX_BUDGET_USD } from "../budgets/budget-rules";
import { RUN_STATUSES } from "./run-states";

/** The ids Open answers: `run_` and 24 hex digits (checked loosely, so older ids stay readable). */
export const RUN_ID = /^run_[0-9A-Za-z]{1,64}$/;
export const MAX_GOAL_CHARS = 2000;
export const RUNS_PAGE_MAX = 100;
const RUNS_PAGE_DEFAULT = 50;
// Counts a run can be given: far beyond any agent, and inside a Postgres integer.
const MAX_COUNT = 1_000_000_000;
/** A model policy is stored and returned as given; this bounds what one run keeps. */
const MAX_MODEL_POLICY_BYTES = 8_192;

/** A USD amount that is more than zero once rounded to whole nanodollars. */
const positiveUsd = z
  .number()
  .positive()
  .max(MAX_BUDGET_USD)
  .refine((usd) => fromUsd(usd) > 0n, "must be at least one nanodollar (1e-9 USD)");
const count = (min: number) => z.number().int().min(min).max(MAX_COUNT);

/** The body of Open; unknown fields are a 400 naming them. */
export const openRunBody = z
  .object({
    goal: z.string().max(MAX_GOAL_CHARS).nullable().optional(),
    budget_usd: positiveUsd,
    max_turns: count(1).nullable().optional(),
    max_tool_calls: count(0).nullable().optional(),
    model_policy: z
      .record(z.string(), z.unknown())
      .refine((p) => JSON.stringify(p).length <= MAX_MODEL_POLICY_BYTES, `must be at most ${MAX_MODEL_POLICY_BYTES} bytes of JSON`)
      .nullable()
      .optional(),
    max_cost_per_minute_usd: positiveUsd.nullable().optional(),
    max_tool_calls_without_progress: count(0).nullable().optional(),
  })
  .strict();

export const closeRunBody = z.object({ status: z.enum(["completed", "cancelled"]).default("completed") }).strict();

/** `limit` (1 to 100, a larger one is capped) and one `status`. */
export const listRunsQuery = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .default(RUNS_PAGE_DEFAULT)
      .transform((n) => Math.min(n, RUNS_PAGE_MAX)),
    status: z.enum(RUN_STATUSES).optional(),
  })
  .strict();
