import { createHash } from "node:crypto";
import type { routing } from "@router/proto";

export const STICKY_MODES = ["adaptive", "sticky", "pinned"] as const;
export type StickyMode = (typeof STICKY_MODES)[number];
export type StickySource = "session_id" | "prompt_cache_key" | "x_session_id";

/** The sticky key a request routes with. */
export interface StickyKey {
  mode: StickyMode;
  source: StickySource;
  /** Hash of the key: pins are stored under it, never under the client's own text. */
  hash: string;
}

/**
 * The request's sticky key: `session_id`, else `prompt_cache_key`, else the `X-Session-Id` header;
 * null without one. The mode is the request's `routing_stability`, `sticky` by default. The body's
 * `session_id` and the header name one conversation, so they share pins; a prompt cache key is
 * another namespace.
 */
export function stickyKeyOf(req: routing.PlanRequest): StickyKey | null {
  const [source, key]: [StickySource, string] = req.sessionId
    ? ["session_id", req.sessionId]
    : req.promptCacheKey
      ? ["prompt_cache_key", req.promptCacheKey]
      : ["x_session_id", req.headerSessionId];
  if (!key) return null;
  const namespace = source === "prompt_cache_key" ? "prompt_cache_key" : "session";
  const hash = createHash("sha256").update(`${namespace}\u0000${key}`).digest("hex").slice(0, 32);
  return { mode: modeOf(req.routingStability), source, hash };
}

function modeOf(value: string): StickyMode {
  return (STICKY_MODES as readonly string[]).includes(value) ? (value as StickyMode) : "sticky";
}

/**
 * The reference the gateway carries from Plan into the completed-request event, so that routing
 * pins the endpoint that served: `<mode>:<hash>`. `adaptive` pins nothing.
 */
export function pinRefOf(key: StickyKey): string {
  return key.mode === "adaptive" ? "" : `${key.mode}:${key.hash}`;
}

export function parsePinRef(ref: string): { mode: "sticky" | "pinned"; hash: string } | null {
  const m = /^(sticky|pinned):([0-9a-f]{32})$/.exec(ref);
  return m ? { mode: m[1] as "sticky" | "pinned", hash: m[2] ?? "" } : null;
}
