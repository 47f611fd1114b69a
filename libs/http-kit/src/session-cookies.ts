import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { parse as parseCookies } from "cookie";
import type { CookieOptions, Request, Response } from "express";

export const SESSION_COOKIE = "rt_session";
export const CSRF_COOKIE = "rt_csrf";
export const CSRF_HEADER = "x-csrf-token";

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** The cookies a request carries (a malformed header gives none rather than an error). */
export function cookiesOf(req: IncomingMessage): Record<string, string | undefined> {
  const header = req.headers.cookie;
  return header ? parseCookies(header) : {};
}

/** The SHA-256 of a session token: the only form the database holds, and how the edge's caches name a session. */
export function sessionTokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Whether the request was addressed to this machine itself, where browsers accept cookies without `Secure` over http. */
export function isLocalRequest(req: IncomingMessage): boolean {
  // Behind the gateway, the host the browser addressed is the one it forwards.
  const forwarded = req.headers["x-forwarded-host"];
  const host = ((typeof forwarded === "string" ? forwarded : undefined) ?? req.headers.host ?? "").toLowerCase();
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0] ?? "";
  return LOCAL_HOSTS.has(name) || name.endsWith(".localhost");
}

/** Cookie attributes for the two session cookies: Secure everywhere but on a local host, Lax, the whole site. */
export function cookieOptions(req: IncomingMessage, opts: { httpOnly: boolean; expires?: Date }): CookieOptions {
  return {
    httpOnly: opts.httpOnly,
    secure: !isLocalRequest(req),
    sameSite: "lax",
    path: "/",
    ...(opts.expires ? { expires: opts.expires } : {}),
  };
}

/**
 * The CSRF token of a session: an HMAC of the session token, so a value planted in the `rt_csrf`
 * cookie by another site cannot match a session it does not know.
 */
export function csrfTokenOf(sessionToken: string, secret: string): string {
  return createHmac("sha256", secret).update(`rt_csrf:${sessionToken}`).digest("base64url");
}

/** Whether the request's `x-csrf-token` equals its `rt_csrf` cookie and belongs to `sessionToken`. */
export function csrfHolds(req: IncomingMessage, sessionToken: string, secret: string): boolean {
  const header = req.headers[CSRF_HEADER];
  const cookie = cookiesOf(req)[CSRF_COOKIE];
  if (typeof header !== "string" || !cookie || header !== cookie) return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken, secret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function setSessionCookies(req: Request, res: Response, token: string, expiresAt: Date, secret: string): void {
  res.cookie(SESSION_COOKIE, token, cookieOptions(req, { httpOnly: true, expires: expiresAt }));
  res.cookie(CSRF_COOKIE, csrfTokenOf(token, secret), cookieOptions(req, { httpOnly: false, expires: expiresAt }));
}

export function clearSessionCookies(req: Request, res: Response): void {
  res.clearCookie(SESSION_COOKIE, cookieOptions(req, { httpOnly: true }));
  res.clearCookie(CSRF_COOKIE, cookieOptions(req, { httpOnly: false }));
}
