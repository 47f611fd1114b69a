import { fromUsd } from "@router/money";
import { z } from "zod";
import { dataOf, FREE_FORM, freeForm, nanodollars, pageOf, route, timestamp, usd } from "./route";

/** The budget windows (`{interval}` of the budget routes). */
export const BUDGET_INTERVALS = ["daily", "weekly", "monthly", "lifetime"] as const;
/** Workspace ids: `ws_` and base62. */
export const WORKSPACE_ID = /^ws_[0-9A-Za-z]{1,64}$/;
/** The largest budget, USD. */
export const MAX_BUDGET_USD = 1_000_000_000;

// ---- workspace and agent budgets ------------------------------------------------------------

export const workspaceBudgetBody = z
  .object({
    limit_usd: z.number().min(0).max(MAX_BUDGET_USD),
    // Every request is BYOK while credits cannot buy anything, so a budget that left BYOK spend out
    // would count nothing: it is counted unless the caller says otherwise.
    include_byok: z.boolean().default(true),
  })
  .strict();

export const workspaceBudget = z.object({ interval: z.enum(BUDGET_INTERVALS), limit_nanodollars: nanodollars, include_byok: z.boolean() });
export const writtenWorkspaceBudget = workspaceBudget.extend({ workspace_id: z.string(), limit_usd: usd });

export const budgetWorkspaceId = z.string().regex(WORKSPACE_ID, "expected a workspace id (ws_...)");

export const agentBudgetBody = z
  .object({
    limit_usd: z.number().min(0).max(MAX_BUDGET_USD),
    include_byok: z.boolean().default(true),
    mode: z.enum(["hard", "soft"]).default("hard"),
    workspace_id: budgetWorkspaceId.nullable().optional(),
  })
  .strict();

/** `DELETE /v1/agents/{agent}/budgets/{interval}`: a workspace-scoped budget names its workspace here. */
export const agentBudgetDeleteQuery = z.object({ workspace_id: budgetWorkspaceId.optional() });

export const agentBudget = z.object({
  agent: z.string(),
  interval: z.enum(BUDGET_INTERVALS),
  limit_usd: usd,
  include_byok: z.boolean(),
  mode: z.enum(["hard", "soft"]),
  workspace_id: z.string().nullable(),
});

export const agentRow = z.object({
  agent: z.string(),
  last_seen: timestamp.nullable(),
  requests_this_month: z.number().int(),
  spend_this_month: usd,
  budgets: z.array(agentBudget),
});

const deleted = z.object({ deleted: z.literal(true) });

// ---- runs -----------------------------------------------------------------------------------

export const RUN_STATUSES = ["open", "paused", "completed", "exhausted", "cancelled"] as const;
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
  .refine((amount) => fromUsd(amount) > 0n, "must be at least one nanodollar (1e-9 USD)");
const runCount = (min: number) => z.number().int().min(min).max(MAX_COUNT);

/** The body of Open; unknown fields are a 400 naming them. */
export const openRunBody = z
  .object({
    goal: z.string().max(MAX_GOAL_CHARS).nullable().optional(),
    budget_usd: positiveUsd,
    max_turns: runCount(1).nullable().optional(),
    max_tool_calls: runCount(0).nullable().optional(),
    model_policy: z
      .record(z.string(), z.unknown())
      .refine((p) => JSON.stringify(p).length <= MAX_MODEL_POLICY_BYTES, `must be at most ${MAX_MODEL_POLICY_BYTES} bytes of JSON`)
      .meta({ description: "the agent's own model policy, stored and returned as given", [FREE_FORM]: true })
      .nullable()
      .optional(),
    max_cost_per_minute_usd: positiveUsd.nullable().optional(),
    max_tool_calls_without_progress: runCount(0).nullable().optional(),
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

/** A run: USD numbers, `remaining` = budget - spent - reserved. */
export const run = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  goal: z.string().nullable(),
  budget: usd,
  spent: usd,
  reserved: usd,
  remaining: usd,
  max_turns: z.number().int().nullable(),
  turns_used: z.number().int(),
  max_tool_calls: z.number().int().nullable(),
  tool_calls_used: z.number().int(),
  model_policy: freeForm("the agent's own model policy, as given at Open"),
  max_cost_per_minute: usd.nullable(),
  max_tool_calls_without_progress: z.number().int().nullable(),
  tool_calls_without_progress: z.number().int(),
  pause_reason: z.string().nullable(),
  paused_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  closed_at: timestamp.nullable(),
});

export const runTurn = z.object({
  turn: z.number().int(),
  request_id: z.string(),
  status: z.enum(["admitted", "served", "failed", "expired"]),
  model: z.string().nullable(),
  finish_reason: z.string().nullable(),
  cost: usd,
  reserved: usd,
  tool_calls: z.number().int(),
  failed_tool_calls: z.number().int(),
  prompt_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  cache_hit_rate: z.number().nullable(),
  model_switch: z.boolean(),
  admitted_at: timestamp,
  settled_at: timestamp.nullable(),
});

export const runTree = run.extend({
  tree: z.object({
    turns: z.array(runTurn),
    cache_hit_rate: z.number().nullable(),
    failed_tool_calls: z.number().int(),
    model_switches: z.number().int(),
    terminal_status: z.enum(RUN_STATUSES).nullable(),
  }),
});

// ---- credits --------------------------------------------------------------------------------

export const PURCHASE_ID = /^pur_[A-Za-z0-9_-]{1,64}$/;
const MAX_PURCHASE_PAGE = 100;

export const purchasesQuery = z.looseObject({
  limit: z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(1, "must be at least 1").max(MAX_PURCHASE_PAGE, `must be at most ${MAX_PURCHASE_PAGE}`))
    .default(20),
  // The last purchase of the previous page, handed out as `next_cursor`.
  cursor: z.string().regex(PURCHASE_ID, "not a cursor this list returned").optional(),
});

/**
 * `{"amount": 25}`: USD in whole cents. The ledger adds the deployment's minimum purchase to the
 * lower bound (`GET /v1/credits/fees` names it).
 */
export const checkoutBody = z.strictObject({ amount: usd.meta({ description: "USD in whole cents, at least `min_purchase` of the fee schedule" }) });

export const creditBalance = z.object({ total_credits: usd, held_credits: usd, available_credits: usd, credit_line: usd });
export const feeSchedule = z.object({ fee_bps: z.number().int(), fee_min: usd, min_purchase: usd, configured: z.boolean(), purchasable: z.boolean() });
export const purchase = z.object({
  id: z.string(),
  created_at: timestamp,
  provider: z.string(),
  status: z.enum(["pending", "paid", "failed"]),
  gross: usd,
  fee: usd,
  net: usd,
  tax_jurisdiction: z.string().nullable(),
  has_document: z.boolean(),
});
export const purchaseDocument = z.object({ kind: z.enum(["invoice", "receipt"]), url: z.string(), pdf_url: z.string().nullable(), number: z.string().nullable() });

/** A payment-processor event: the processor's own JSON, verified against its signature over the bytes. */
export const processorEvent = freeForm("the payment processor's event, exactly as it signed it");

// ---- the routes -----------------------------------------------------------------------------

const owner = "ledger" as const;
const m = { owner, access: "management" as const };
const runs = { owner, access: "any" as const };

export const LEDGER_ROUTES = [
  route({ ...m, permission: "read", method: "get", path: "/v1/workspaces/:id/budgets", summary: "A workspace's budgets (none for an unknown workspace)", answer: pageOf(workspaceBudget) }),
  route({
    ...m,
    permission: "config:write",
    method: "put",
    path: "/v1/workspaces/:id/budgets/:interval",
    summary: "Set a workspace budget for a window",
    body: workspaceBudgetBody,
    answer: dataOf(writtenWorkspaceBudget),
  }),
  route({ ...m, permission: "config:write", method: "delete", path: "/v1/workspaces/:id/budgets/:interval", summary: "Remove a workspace budget", answer: dataOf(deleted) }),
  route({ ...m, permission: "read", method: "get", path: "/v1/agents", summary: "Agents named in the last 31 days or with a budget", answer: pageOf(agentRow) }),
  route({ ...m, permission: "config:write", method: "put", path: "/v1/agents/:agent/budgets/:interval", summary: "Set an agent budget for a window", body: agentBudgetBody, answer: dataOf(agentBudget) }),
  route({
    ...m,
    permission: "config:write",
    method: "delete",
    path: "/v1/agents/:agent/budgets/:interval",
    summary: "Remove an agent budget",
    query: agentBudgetDeleteQuery,
    answer: dataOf(deleted),
  }),

  // Runs: an inference key needs no role (the agent's own); a management caller needs the permission.
  route({ ...runs, permission: "usage:read", method: "get", path: "/v1/runs", summary: "Runs of the organisation, newest first", query: listRunsQuery, answer: pageOf(run) }),
  route({ owner, access: "inference", permission: null, method: "post", path: "/v1/runs", summary: "Open a run (an inference key only)", body: openRunBody, answer: dataOf(run), status: 201 }),
  route({ ...runs, permission: "usage:read", method: "get", path: "/v1/runs/:id", summary: "A run and its tree of turns", answer: dataOf(runTree) }),
  route({
    ...runs,
    permission: "config:write",
    method: "post",
    path: "/v1/runs/:id/close",
    summary: "Close a run as completed or cancelled",
    body: closeRunBody,
    answer: dataOf(run),
    refused: [409],
  }),
  route({ ...runs, permission: "config:write", method: "post", path: "/v1/runs/:id/resume", summary: "Resume a run a detector paused", answer: dataOf(run), refused: [409] }),

  route({ ...m, permission: "billing:read", method: "get", path: "/v1/credits", summary: "The credit balance", answer: dataOf(creditBalance) }),
  route({ owner, access: "public", permission: null, method: "get", path: "/v1/credits/fees", summary: "The credit purchase fee schedule", answer: dataOf(feeSchedule) }),
  route({ ...m, permission: "billing:read", method: "get", path: "/v1/credits/purchases", summary: "Credit purchases, newest first", query: purchasesQuery, answer: pageOf(purchase) }),
  route({
    ...m,
    permission: "billing:read",
    method: "get",
    path: "/v1/credits/purchases/:id/document",
    summary: "A purchase's invoice or receipt, from the payment processor",
    answer: dataOf(purchaseDocument),
  }),
  route({
    ...m,
    permission: "billing:write",
    method: "post",
    path: "/v1/credits/checkout",
    summary: "Start a credit purchase: a hosted checkout address (refused with 409 while credits cannot be spent)",
    body: checkoutBody,
    answer: dataOf(z.object({ url: z.string(), id: z.string(), fee: usd })),
    status: 201,
    refused: [409],
    // Refused before its body is read while credits cannot be bought.
    bodyUnread: true,
  }),
  route({
    owner,
    access: "processor",
    permission: null,
    method: "post",
    path: "/v1/billing/webhook",
    summary: "Receive a payment-processor event",
    body: processorEvent,
    answer: dataOf(z.object({ received: z.literal(true) })),
    // The processor signs the exact bytes, in this header.
    passHeaders: ["stripe-signature"],
    bodyUnread: true,
  }),
];
