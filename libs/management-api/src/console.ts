import { z } from "zod";
import { dataOf, route, type Access } from "./route";

// ---- uptime -----------------------------------------------------------------------------------

/** What `router probe` reports: where it probed from, whether /health answered ok, and when (default: now). */
export const probeReport = z.strictObject({
  region: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "lower-case letters, digits and dashes (at most 40), e.g. eu-west"),
  up: z.boolean(),
  at: z.iso.datetime({ offset: true }).optional().meta({ description: "ISO 8601; within the last 7 days" }),
});
export type ProbeReport = z.infer<typeof probeReport>;

/** A counted report: the UTC day it counted on. */
export const countedProbe = z.object({ region: z.string(), day: z.string().meta({ description: "YYYY-MM-DD (UTC)" }), up: z.boolean() });

/** One UTC day of the uptime figure; `uptime` is null on a day of fewer than 60 probes (unmeasured). */
export const uptimeDay = z.object({ date: z.string(), uptime: z.number().nullable(), probes: z.number().int() });
export const uptime = z
  .object({ days: z.array(uptimeDay), overall: z.number().nullable(), measured_days: z.number().int() })
  .meta({ id: "Uptime" });
export type Uptime = z.infer<typeof uptime>;

// ---- the routes -------------------------------------------------------------------------------

const owner = "console" as const;

export const CONSOLE_ROUTES = [
  route({ owner, access: "public", permission: null, method: "get", path: "/v1/status/uptime", summary: "Measured uptime of the last 90 UTC days, oldest first", answer: dataOf(uptime) }),
  route({
    owner,
    access: "probe",
    permission: null,
    method: "post",
    path: "/v1/status/probes",
    summary: "Count one uptime probe of /health from a region (`router probe` reports here)",
    body: probeReport,
    answer: dataOf(countedProbe),
    status: 201,
    // The probe's own token, which the console checks.
    passHeaders: ["authorization"],
  }),
];

// ---- the dashboard's pages --------------------------------------------------------------------

/** The dashboard's page routes: one bundle, the path picks the page (`/invite` is the invitation landing). */
export const DASHBOARD_PAGES = ["/signin", "/auth", "/workspace", "/invite"] as const;

/**
 * What the console serves to browsers besides the API: the pages, their hashed assets, `/` (a
 * redirect by the session cookie, which is passed on for it alone) and the pages' CSP reports (whose
 * body the console reads itself, in its own content type). Express paths; all public, limited per
 * address at the edge where `limit` names the limit.
 */
export const CONSOLE_PAGES: ReadonlyArray<{ method: "get" | "post"; paths: readonly string[]; passHeaders?: readonly string[]; limit?: "csp_report"; bodyUnread?: boolean }> = [
  { method: "get", paths: ["/"], passHeaders: ["cookie"] },
  { method: "get", paths: [...DASHBOARD_PAGES, "/assets/*file"] },
  { method: "post", paths: ["/csp-report"], limit: "csp_report", bodyUnread: true },
];

// ---- MCP --------------------------------------------------------------------------------------

/**
 * The header a gateway adds when it forwards `/mcp`: a short-lived token the gateways sign, naming
 * the MCP client's address. The console hands it back unchanged on each tool's call of a gateway
 * route, so that any replica counts the per-address limits for that client, not for the console.
 */
export const SELF_CALL_HEADER = "x-router-self-call";

/** The MCP caller's headers the tools call the gateway's routes with: the routes then see the same caller. */
export const MCP_CALLER_HEADERS = ["authorization", "user-agent", "http-referer", "x-title"] as const;

/**
 * The MCP server, served by the console. The gateway authenticates `POST` first (`access`: inference
 * keys only, as the routes the tools call) and forwards it with the body unread (the console answers
 * a malformed one as a JSON-RPC error), the caller's headers (and the protocol revision the client
 * speaks, which the SDK checks) and a self-call token. Any other method reaches the console as it
 * is, for its 405.
 */
export const CONSOLE_MCP = {
  path: "/mcp",
  method: "post",
  access: "inference",
  passHeaders: [...MCP_CALLER_HEADERS, "mcp-protocol-version"],
  bodyUnread: true,
  selfCall: true,
} as const satisfies { path: string; method: "post"; access: Access; passHeaders: readonly string[]; bodyUnread: boolean; selfCall: boolean };
