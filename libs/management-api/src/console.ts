import { z } from "zod";
import { dataOf, route, timestamp, type Access } from "./route";

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

// ---- content-logging settings -----------------------------------------------------------------

/** The hash of a key as the API names keys: 64 lower-case hex characters. */
const keyHash = z.string().regex(/^[0-9a-f]{64}$/, "expected the 64-character hex hash of a key");
const keyHashes = z
  .array(keyHash)
  .max(1000)
  .transform((hashes) => [...new Set(hashes)]);

/** The fields `PUT /v1/logging` takes; any other is refused, named. */
export const LOGGING_FIELDS = ["enabled", "key_include", "key_exclude", "retention_days", "locked", "purposes"] as const;

/** `PUT /v1/logging`: the whole settings (an omitted field takes its default, `purposes` excepted). */
export const loggingPutBody = z.object({
  enabled: z.literal(false, { error: "cannot be true in this release: stored content is not offered yet" }).default(false),
  key_include: keyHashes.default([]),
  key_exclude: keyHashes.default([]),
  retention_days: z.number().int().min(90, "must be at least 90").max(3650).default(90),
  locked: z.boolean().default(false),
  purposes: z
    .array(z.enum(["self_access", "rag"]))
    .refine((p) => p.includes("self_access"), "must include self_access")
    .transform((p) => [...new Set(p)])
    .optional(),
});

export const loggingSettings = z
  .object({
    enabled: z.boolean(),
    key_include: z.array(z.string()),
    key_exclude: z.array(z.string()),
    retention_days: z.number().int(),
    locked: z.boolean(),
    purposes: z.array(z.enum(["self_access", "rag"])),
    consented_at: timestamp.nullable(),
  })
  .meta({ id: "LoggingSettings" });

// ---- the routes -------------------------------------------------------------------------------

const owner = "console" as const;

export const CONSOLE_ROUTES = [
  route({ owner, access: "management", permission: "read", method: "get", path: "/v1/logging", summary: "Content-logging settings", answer: dataOf(loggingSettings) }),
  route({
    owner,
    access: "management",
    permission: "config:write",
    method: "put",
    path: "/v1/logging",
    summary: "Change content-logging settings (while locked, only a request that clears the lock)",
    body: loggingPutBody,
    answer: dataOf(loggingSettings),
    refused: [409],
  }),
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
 * redirect by the session cookie), the pages' CSP reports (whose body the console reads itself, in
 * its own content type) and the OAuth sign-in's redirects (the callback reads the sign-in's state
 * cookie), and the OpenAPI document. Express paths; all public, limited per address at the edge where `limit` names the
 * limit; cookies are passed on only where `passHeaders` names them.
 */
export const CONSOLE_PAGES: ReadonlyArray<{ method: "get" | "post"; paths: readonly string[]; passHeaders?: readonly string[]; limit?: "csp_report" | "openapi"; bodyUnread?: boolean }> = [
  { method: "get", paths: ["/"], passHeaders: ["cookie"] },
  { method: "get", paths: [...DASHBOARD_PAGES, "/assets/*file"] },
  { method: "post", paths: ["/csp-report"], limit: "csp_report", bodyUnread: true },
  { method: "get", paths: ["/v1/auth/oauth/:provider/start", "/v1/auth/oauth/:provider/callback"], passHeaders: ["cookie"] },
  { method: "get", paths: ["/openapi.json", "/openapi.yaml"], limit: "openapi" },
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
