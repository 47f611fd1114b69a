import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { invalid } from "@router/errors";

/** What the chat route reads from request headers. */
export interface RouterHeaders {
  metadata: boolean;
  sessionId: string | null;
  vendorBeta: string | null;
  /** Scheme and host only; path, query and fragment are never kept on records. */
  httpReferer: string | null;
  agent: string | null;
  appTitle: string | null;
  appHidden: boolean;
  appCategories: string[];
  /** Stable id of the calling app (from its URL, else its title); null when neither was sent. */
  appId: string | null;
  userAgent: string | null;
}

/** Agent name rule: 1 to 64 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit. */
export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const CATEGORY = /^[a-z0-9][a-z0-9 _/-]{0,63}$/;
const MAX_TEXT = 256;

/**
 * A single-valued header. Node joins a header sent twice with ", "; the first one sent wins. Only a
 * value holding ", " pays for the look at the separate values (a title may hold one legitimately).
 */
function one(req: IncomingMessage, name: string): string | null {
  const key = name.toLowerCase();
  const v = req.headers[key];
  if (typeof v !== "string") return null;
  return nonEmpty(v.includes(", ") ? (req.headersDistinct?.[key]?.[0] ?? v) : v);
}

/** A list header: values sent on repeated headers join the list, as HTTP says. */
function joined(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === "string" ? nonEmpty(v) : null;
}

function nonEmpty(value: string): string | null {
  const t = value.trim();
  return t === "" ? null : t;
}

/** An enum header: true for `on`, false for absent or one of `off`; anything else is a 400. */
function onOff(req: IncomingMessage, name: string, on: string, off: string[]): boolean {
  const v = one(req, name);
  if (v === null) return false;
  const lower = v.toLowerCase();
  if (lower === on) return true;
  if (off.includes(lower)) return false;
  throw invalid(name, `expected "${on}"${off.length ? ` or "${off.join('" or "')}"` : ""}`);
}

function refererOrigin(raw: string | null): { origin: string | null; app: string | null } {
  if (!raw) return { origin: null, app: null };
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") return { origin: null, app: null };
    return { origin: `${u.protocol}//${u.host}`, app: `${u.protocol}//${u.host}${u.pathname}` };
  } catch {
    // Attribution is best effort: an unparsable referer is not worth refusing a completion.
    return { origin: null, app: null };
  }
}

const clip = (s: string | null): string | null => (s === null ? null : s.slice(0, MAX_TEXT));

/** Reads and checks the router's request headers; throws a 400 naming the header. */
export function readRouterHeaders(req: IncomingMessage): RouterHeaders {
  const agent = one(req, "x-router-agent");
  if (agent !== null && !AGENT_NAME.test(agent)) {
    throw invalid(
      "X-Router-Agent",
      "expected 1 to 64 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
    );
  }
  const categoriesRaw = joined(req, "x-app-categories");
  const appCategories = categoriesRaw
    ? categoriesRaw
        .split(",")
        .map((c) => c.trim().toLowerCase())
        .filter((c) => c !== "")
    : [];
  if (appCategories.length > 2) throw invalid("X-App-Categories", "at most two comma-separated categories");
  for (const c of appCategories) {
    if (!CATEGORY.test(c)) throw invalid("X-App-Categories", `"${c.slice(0, 64)}" is not a category (up to 64 letters, digits, spaces, '-', '_' or '/')`);
  }
  const sessionId = one(req, "x-session-id");
  if (sessionId !== null && sessionId.length > MAX_TEXT) throw invalid("X-Session-Id", `at most ${MAX_TEXT} characters`);

  const metadata = onOff(req, "X-Router-Metadata", "enabled", ["disabled"]) || onOff(req, "X-Metadata", "enabled", ["disabled"]);
  const appHidden = onOff(req, "X-App-Visibility", "hidden", ["public", "visible"]);
  const { origin, app } = refererOrigin(one(req, "http-referer") ?? one(req, "referer") ?? one(req, "referrer"));
  const appTitle = clip(one(req, "x-title") ?? one(req, "x-app-title") ?? one(req, "x-router-title"));
  const appKey = app ?? (appTitle ? `title:${appTitle}` : null);
  return {
    metadata,
    sessionId,
    vendorBeta: clip(one(req, "x-vendor-beta")),
    httpReferer: origin,
    agent,
    appTitle,
    appHidden,
    appCategories,
    appId: appKey ? `app_${createHash("sha256").update(appKey).digest("hex").slice(0, 20)}` : null,
    userAgent: clip(one(req, "user-agent")),
  };
}
