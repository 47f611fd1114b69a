import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { dataOf, json, jsonBody, looseObject, refusals, SECURITY } from "./envelopes";

type Method = "get" | "post" | "put" | "patch" | "delete";
/** `any`: an inference key, a management key or a dashboard session (runs). */
type Access = "public" | "inference" | "management" | "any" | "processor";

interface ForwardedOperation {
  method: Method;
  path: string;
  summary: string;
  access: Access;
  /** The answer is a page (`data` array and `next_cursor`) rather than one object. */
  list?: boolean;
  /** The operation takes a JSON body. */
  body?: boolean;
  /** Query parameters, all strings at the edge. */
  query?: string[];
  status?: number;
  /** Refusals besides the usual ones of its access. */
  refused?: Array<409>;
}

/**
 * Routes the gateway forwards to the service that owns them (activity, routing, reports, alerts,
 * broadcast, runaway). Their request and response schemas live in those services; importing them
 * would pull the services into the gateway, so bodies and rows are described as open objects here
 * and the owning service's README is the field reference (docs/adr, ADR 0077).
 */
const OPERATIONS: ForwardedOperation[] = [
  // routing: the public catalog
  { method: "get", path: "/v1/models", summary: "List models", access: "public", list: true, query: ["limit", "offset", "q", "model_authors", "context", "sort"] },
  { method: "get", path: "/v1/models/{author}/{slug}", summary: "Get a model", access: "public" },
  { method: "get", path: "/v1/models/{author}/{slug}/endpoints", summary: "A model's endpoints", access: "public" },
  { method: "get", path: "/v1/providers", summary: "List providers", access: "public", list: true },
  // activity
  { method: "get", path: "/v1/activity", summary: "Usage, one row per request", access: "management", list: true, query: ["limit", "days", "cursor", "workspace", "key", "include"] },
  { method: "get", path: "/v1/activity/summary", summary: "Usage summary", access: "management", query: ["days", "workspace"] },
  { method: "get", path: "/v1/activity/breakdown", summary: "The summary's period split by model, provider, key, app or agent", access: "management", query: ["by", "days", "workspace", "limit", "daily"] },
  { method: "get", path: "/v1/activity/export", summary: "Usage as CSV", access: "management", query: ["days", "workspace"] },
  { method: "get", path: "/v1/activity/requests/{id}", summary: "One request with its usage lines and dispatches", access: "management" },
  { method: "get", path: "/v1/activity/upstream", summary: "Upstream provider requests", access: "management", list: true, query: ["limit", "days", "cursor", "request", "provider", "status"] },
  { method: "get", path: "/v1/activity/conversations", summary: "Conversations (requests grouped by session_id)", access: "management", list: true, query: ["limit", "days", "cursor"] },
  { method: "get", path: "/v1/generation", summary: "The record of a generation made with the calling key", access: "inference", query: ["id"] },
  { method: "get", path: "/v1/generation/{id}/content", summary: "A generation's stored prompt and completion", access: "management" },
  // routing: account defaults and presets
  { method: "get", path: "/v1/routing/defaults", summary: "Account routing defaults", access: "management" },
  { method: "put", path: "/v1/routing/defaults", summary: "Change the account routing defaults", access: "management", body: true },
  { method: "get", path: "/v1/presets", summary: "List presets", access: "management", list: true },
  { method: "post", path: "/v1/presets", summary: "Create a preset", access: "management", body: true, status: 201 },
  { method: "get", path: "/v1/presets/{slug}", summary: "A preset and its history", access: "management" },
  { method: "delete", path: "/v1/presets/{slug}", summary: "Delete a preset", access: "management" },
  { method: "post", path: "/v1/presets/{slug}/versions", summary: "Save a new version of a preset", access: "management", body: true, status: 201 },
  { method: "post", path: "/v1/presets/{slug}/revert", summary: "Revert a preset to an earlier version (as a new version)", access: "management", body: true, status: 201 },
  // routing: guardrails and the privacy policy
  { method: "get", path: "/v1/guardrails", summary: "Guardrails", access: "management", list: true },
  { method: "post", path: "/v1/guardrails", summary: "Create a guardrail", access: "management", body: true, status: 201 },
  { method: "delete", path: "/v1/guardrails/{id}", summary: "Delete a guardrail", access: "management" },
  { method: "post", path: "/v1/guardrails/{id}/assignments", summary: "Assign a guardrail to a key or a member", access: "management", body: true, status: 201 },
  { method: "get", path: "/v1/privacy", summary: "The account privacy policy, with eligibility", access: "management" },
  { method: "put", path: "/v1/privacy", summary: "Replace the account privacy policy", access: "management", body: true },
  { method: "post", path: "/v1/privacy/preview", summary: "Preview a privacy policy before saving it", access: "management", body: true },
  // ledger: workspace budgets and agents
  { method: "get", path: "/v1/workspaces/{id}/budgets", summary: "A workspace's budgets (none for an unknown workspace)", access: "management", list: true },
  { method: "put", path: "/v1/workspaces/{id}/budgets/{interval}", summary: "Set a workspace budget for a window", access: "management", body: true },
  { method: "delete", path: "/v1/workspaces/{id}/budgets/{interval}", summary: "Remove a workspace budget", access: "management" },
  { method: "get", path: "/v1/agents", summary: "Agents named in the last 31 days or with a budget", access: "management", list: true },
  { method: "put", path: "/v1/agents/{agent}/budgets/{interval}", summary: "Set an agent budget for a window", access: "management", body: true },
  { method: "delete", path: "/v1/agents/{agent}/budgets/{interval}", summary: "Remove an agent budget", access: "management", query: ["workspace_id"] },
  // ledger: runs (one goal, many turns, one budget; `run_id` on a chat completion makes it a turn)
  { method: "get", path: "/v1/runs", summary: "Runs of the organisation, newest first", access: "any", list: true, query: ["limit", "status"] },
  { method: "post", path: "/v1/runs", summary: "Open a run (an inference key only)", access: "inference", body: true, status: 201 },
  { method: "get", path: "/v1/runs/{id}", summary: "A run and its tree of turns", access: "any" },
  { method: "post", path: "/v1/runs/{id}/close", summary: "Close a run as completed or cancelled", access: "any", body: true, refused: [409] },
  { method: "post", path: "/v1/runs/{id}/resume", summary: "Resume a run a detector paused", access: "any", refused: [409] },
  // ledger: credits (checkout is refused with 409 unless the operator charges a fee and takes payments)
  { method: "get", path: "/v1/credits", summary: "The credit balance", access: "management" },
  { method: "get", path: "/v1/credits/fees", summary: "The credit purchase fee schedule", access: "public" },
  { method: "get", path: "/v1/credits/purchases", summary: "Credit purchases, newest first", access: "management", list: true, query: ["limit", "cursor"] },
  { method: "get", path: "/v1/credits/purchases/{id}/document", summary: "A purchase's invoice or receipt, from the payment processor", access: "management" },
  { method: "post", path: "/v1/credits/checkout", summary: "Start a credit purchase: a hosted checkout address (refused with 409 while credits cannot be spent)", access: "management", body: true, status: 201, refused: [409] },
  { method: "post", path: "/v1/billing/webhook", summary: "Receive a payment-processor event", access: "processor", body: true },
  // reports
  { method: "get", path: "/v1/reports/branding", summary: "Report branding", access: "management" },
  { method: "put", path: "/v1/reports/branding", summary: "Change the report branding", access: "management", body: true },
  { method: "get", path: "/v1/reports/workspaces/{id}", summary: "A workspace's client report for a month", access: "management", query: ["month", "format"] },
  // alerts
  { method: "get", path: "/v1/alerts/channels", summary: "Usage-alert channels", access: "management", list: true },
  { method: "post", path: "/v1/alerts/channels", summary: "Add a usage-alert channel", access: "management", body: true, status: 201 },
  { method: "delete", path: "/v1/alerts/channels/{id}", summary: "Remove a usage-alert channel", access: "management" },
  { method: "post", path: "/v1/alerts/channels/{id}/test", summary: "Send a test alert", access: "management" },
  { method: "get", path: "/v1/alerts/deliveries", summary: "Recent alert deliveries", access: "management", list: true },
  // runaway (the flag list is the gateway's, adding key state; the settings are forwarded)
  { method: "get", path: "/v1/alerts/settings", summary: "What a runaway flag does", access: "management" },
  { method: "put", path: "/v1/alerts/settings", summary: "Choose what a runaway flag does", access: "management", body: true },
  { method: "get", path: "/v1/alerts/runaway", summary: "Runaway-spend flags of the last 30 days", access: "management", list: true },
  // broadcast
  { method: "get", path: "/v1/broadcast/destinations", summary: "Broadcast destinations", access: "management", list: true },
  { method: "post", path: "/v1/broadcast/destinations", summary: "Add a broadcast destination", access: "management", body: true, status: 201 },
  { method: "patch", path: "/v1/broadcast/destinations/{id}", summary: "Change a broadcast destination", access: "management", body: true },
  { method: "delete", path: "/v1/broadcast/destinations/{id}", summary: "Remove a broadcast destination", access: "management" },
  { method: "post", path: "/v1/broadcast/destinations/{id}/test", summary: "Send a test trace to a destination", access: "management" },
];

const REFUSALS_BY_ACCESS = {
  public: refusals(400, 404, 429),
  inference: refusals(400, 401, 403, 404, 429),
  management: refusals(400, 401, 403, 404, 429),
  any: refusals(400, 401, 403, 404, 429),
  processor: refusals(400, 429),
};

const ACCESS_SECURITY: Record<Access, (typeof SECURITY)[keyof typeof SECURITY]> = {
  public: SECURITY.public,
  inference: SECURITY.inference,
  management: SECURITY.management,
  any: [...SECURITY.inference, ...SECURITY.management],
  processor: SECURITY.processor,
};

function paramsOf(path: string) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  return names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined;
}

export function registerForwardedPaths(registry: OpenAPIRegistry): void {
  // Cursor lists add `next_cursor`; the catalog pages by offset.
  const rows = z.looseObject({ data: z.array(looseObject) });
  for (const op of OPERATIONS) {
    const query = op.query ? z.object(Object.fromEntries(op.query.map((q) => [q, z.string().optional()]))) : undefined;
    registry.registerPath({
      method: op.method,
      path: op.path,
      summary: op.summary,
      security: ACCESS_SECURITY[op.access],
      request: { params: paramsOf(op.path), query, body: op.body ? jsonBody(looseObject) : undefined },
      responses: {
        [op.status ?? 200]: json(op.summary, op.list ? rows : dataOf(looseObject)),
        ...REFUSALS_BY_ACCESS[op.access],
        ...refusals(...(op.refused ?? [])),
      },
    });
  }
}
