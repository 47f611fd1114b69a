import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { DomainError } from "@router/errors";
import type { Clock } from "@router/money";
import { claimedKeyClass, hashKey, KEY_PREFIXES, keyClassOf, seatlessKey, type KeyClass, type KeyRecord } from "@router/api-keys";
import type { AuthCache } from "./auth-cache";
import type { Caller } from "./caller";

export interface AuthenticateOptions {
  /** The key classes the route takes: `["inference"]` for chat and MCP, `["management"]` for management. */
  allow: KeyClass[];
}

/** Builds the middleware for one route class; it sets `res.locals.caller`. */
export type Authenticate = (opts: AuthenticateOptions) => RequestHandler;

/**
 * The caller of one request, for a route served on Node's own request and response; rejects with
 * the route's 401/403 (a 401 also sets `WWW-Authenticate` on `res`).
 */
export type ResolveCaller = (req: IncomingMessage, res: ServerResponse) => Promise<Caller>;

export interface AuthenticatorDeps {
  cache: AuthCache;
  pepper: string;
  clock: Clock;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function expected(allow: KeyClass[]): string {
  return allow.map((c) => `'Bearer ${KEY_PREFIXES[c]}...'`).join(" or ");
}

function unauthorized(message: string): DomainError {
  return new DomainError("unauthorized", message, { details: { field: "Authorization" } });
}

/** The refusal of a `seatlessKey`. */
export function seatGone(): DomainError {
  return unauthorized("Authorization: this key's person no longer has a seat in its organisation");
}

function describe(cls: KeyClass): string {
  return cls === "inference" ? "an inference key (rt-v1-...)" : "a management key (rt-mgmt-...)";
}

/**
 * The caller of an inference route. The key's person becomes the member whose guardrails bind its
 * requests; their role is left out: it belongs to management callers and grants an inference key
 * nothing.
 */
export function callerOf(key: KeyRecord): Caller {
  const { orgId, operator, disabled: _d, userId, userRole: _r, ...callerKey } = key;
  return { orgId, operator, key: callerKey, memberUserId: userId };
}

/**
 * Resolves the bearer key through the auth cache and checks it against the route class. Errors:
 * missing or malformed header, unknown, revoked or expired key, a key whose person lost their seat
 * → 401 `unauthorized`; a key of the wrong class → 403 `permission_denied`; a paused key → 403
 * `key_paused`.
 */
export async function resolveBearerKey(
  deps: AuthenticatorDeps,
  req: IncomingMessage,
  res: ServerResponse,
  { allow }: AuthenticateOptions,
): Promise<KeyRecord> {
  const header = req.headers.authorization;
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!header || !token || !claimedKeyClass(token)) {
    res.setHeader("WWW-Authenticate", 'Bearer realm="router"');
    throw unauthorized(
      header ? `Authorization: malformed; expected ${expected(allow)}` : `Authorization: missing; expected ${expected(allow)}`,
    );
  }
  // A token with a key's prefix is a key to the person who sent it: one cut short or mistyped is
  // refused as unknown (no lookup needed when its form cannot be a key), never as "not a key".
  const claimed = keyClassOf(token);
  const key = claimed ? await deps.cache.get(hashKey(token, deps.pepper)) : undefined;
  if (!key || key.class !== claimed) {
    res.setHeader("WWW-Authenticate", 'Bearer realm="router", error="invalid_token"');
    throw unauthorized("Authorization: unknown or revoked key");
  }
  if (key.disabled) throw unauthorized("Authorization: this key has been revoked");
  if (key.expiresAt && key.expiresAt.getTime() <= deps.clock.now().getTime()) {
    throw unauthorized("Authorization: this key has expired");
  }
  // Removing a seat revokes the person's keys; a key created while the removal ran is refused here.
  if (seatlessKey(key)) throw seatGone();
  if (!allow.includes(key.class)) {
    throw new DomainError(
      "permission_denied",
      `this route takes ${allow.map(describe).join(" or ")}; ${describe(key.class)} cannot call it`,
      { details: { key_class: key.class } },
    );
  }
  if (key.paused) {
    throw new DomainError("key_paused", `this key is paused (${key.pausedReason ?? "manual"}); resume it with PATCH /v1/keys/{hash}`, {
      details: { paused_reason: key.pausedReason ?? "manual" },
    });
  }
  return key;
}

/** `resolveBearerKey` as the caller a key-authenticated route works with. */
export function createCallerResolver(deps: AuthenticatorDeps, opts: AuthenticateOptions): ResolveCaller {
  return async (req, res) => callerOf(await resolveBearerKey(deps, req, res, opts));
}

/** An express middleware that sets `res.locals.caller` from `resolve`, or passes its refusal on. */
export function callerMiddleware(resolve: ResolveCaller): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.locals.caller = await resolve(req, res);
    next();
  };
}

/** The express middleware of `createCallerResolver`, per route class. */
export function createAuthenticator(deps: AuthenticatorDeps): Authenticate {
  return (opts) => callerMiddleware(createCallerResolver(deps, opts));
}

/** The caller the authentication middleware resolved; throws when a route forgot to authenticate. */
export function requireCaller(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw new DomainError("internal", "route reached without authentication");
  return caller;
}
