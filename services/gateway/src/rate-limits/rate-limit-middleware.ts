import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { DomainError } from "@router/errors";
import type { Principal } from "@router/access";
import { requirePrincipal } from "../auth/principal";
import { addressSubject, clientAddress, type TrustProxy } from "./client-address";
import type { SelfCallTokens } from "./self-calls";
import {
  ADDRESS_LIMIT_NAMES,
  CREDENTIAL_LIMIT_NAMES,
  describeLimit,
  windowName,
  type AddressLimitName,
  type CredentialLimitName,
  type LimitName,
  type RateLimitTable,
} from "./limits";
import type { RateDecision, RateLimitStore, WindowedLimiter } from "./rate-limiter";

/** Who a credential limit counts: `id` is the key in the store, `per` names it in messages. */
export interface RateSubject {
  id: string;
  per: "key" | "session";
}

/**
 * A management key counts by its hash; a dashboard session by its own token hash (not by the key it
 * was exchanged from, and a person's session may have no key at all).
 */
export function principalSubject(p: Principal): RateSubject {
  if (p.session) return { id: `session:${p.session.tokenHash}`, per: "session" };
  return { id: `key:${p.keyHash ?? p.orgId}`, per: "key" };
}

/** Counts one request of `subject` under a credential limit; throws the 429 when it is refused. */
export type CredentialRateLimit = (subject: RateSubject, res: Response) => Promise<void>;

/** The binding window written into a response so far (a response may pass two limits). */
interface WrittenLimit {
  remaining: number;
  resetMs: number;
}

const WRITTEN = Symbol("rateLimitWritten");

/** Whole seconds, at least 1. */
const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * Writes `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until the window resets) for the
 * tightest window seen on this response: a later limit replaces the headers when it refused, or
 * when it leaves fewer requests (or as few, for longer).
 */
function writeHeaders(res: Response, d: RateDecision): void {
  const locals = res.locals as { [WRITTEN]?: WrittenLimit };
  const before = locals[WRITTEN];
  if (d.allowed && before && (before.remaining < d.remaining || (before.remaining === d.remaining && before.resetMs >= d.resetMs))) return;
  locals[WRITTEN] = { remaining: d.remaining, resetMs: d.resetMs };
  res.setHeader("X-RateLimit-Limit", String(d.window.points));
  res.setHeader("X-RateLimit-Remaining", String(d.remaining));
  res.setHeader("X-RateLimit-Reset", String(seconds(d.resetMs)));
}

export interface GatewayRateLimitsDeps {
  store: RateLimitStore;
  limits: RateLimitTable;
  /** `GATEWAY_TRUSTED_PROXIES`, compiled (`trustedProxies`). */
  trust: TrustProxy;
  /** Called with the limit's name on every refusal (the metrics counter). */
  onRefused?: (limit: LimitName) => void;
  /** Calls of its routes for an MCP client, with a token a gateway signed: counted as that client. */
  selfCalls?: SelfCallTokens;
}

/**
 * The gateway's rate limits, as express middleware and as the management authentication's hook.
 * One instance per gateway: it holds one limiter per limit of the table.
 *
 * - `publicRateLimit(name)`: per client address, for a public route (`catalog`, `auth_exchange`, ...).
 * - `credential("management")`: the management authentication calls it with the principal's subject.
 * - `credentialRateLimit(name)`: middleware after `manage(...)`, counting the principal's subject
 *   (`activity_export` on the CSV export, on top of `management`).
 */
export class GatewayRateLimits {
  private readonly limiters = new Map<LimitName, WindowedLimiter>();
  private readonly publicHandlers = new Map<AddressLimitName, RequestHandler>();

  constructor(private readonly deps: GatewayRateLimitsDeps) {
    for (const name of [...ADDRESS_LIMIT_NAMES, ...CREDENTIAL_LIMIT_NAMES]) {
      this.limiters.set(name, deps.store.limiter(name, deps.limits[name]));
    }
  }

  /** `{"store": "redis", "shared": true}` for `GET /health`. */
  health(): { store: "redis" | "memory"; shared: boolean } {
    return { store: this.deps.store.kind, shared: this.deps.store.shared };
  }

  /** The client address a request counts for (a self-call counts for the client it stands for). */
  addressOf(req: IncomingMessage): string {
    return this.deps.selfCalls?.clientOf(req) ?? clientAddress(req, this.deps.trust);
  }

  /** Middleware limiting a public route per client address. The same handler for a name every time. */
  publicRateLimit(name: AddressLimitName): RequestHandler {
    let handler = this.publicHandlers.get(name);
    if (!handler) {
      handler = (req: Request, res: Response, next: NextFunction) => {
        const subject = addressSubject(this.addressOf(req));
        this.enforce(name, subject, "address", res).then(() => next(), next);
      };
      this.publicHandlers.set(name, handler);
    }
    return handler;
  }

  /** A credential limit as a function of the subject (the management authentication's hook). */
  credential(name: CredentialLimitName): CredentialRateLimit {
    return (subject, res) => this.enforce(name, subject.id, subject.per, res);
  }

  /** Middleware counting the authenticated principal under `name`; mount after `manage(...)`. */
  credentialRateLimit(name: CredentialLimitName): RequestHandler {
    const limit = this.credential(name);
    return (_req: Request, res: Response, next: NextFunction) => {
      limit(principalSubject(requirePrincipal(res)), res).then(() => next(), next);
    };
  }

  private async enforce(name: LimitName, subject: string, per: string, res: Response): Promise<void> {
    const decision = await this.limiters.get(name)!.consume(subject);
    // The store and its insurance both failed: let the request through, unlimited (logged once).
    if (!decision) return;
    writeHeaders(res, decision);
    if (decision.allowed) return;
    const retryAfter = seconds(decision.resetMs);
    res.setHeader("Retry-After", String(retryAfter));
    this.deps.onRefused?.(name);
    throw new DomainError("rate_limited", describeLimit(name, decision.window, per), {
      details: {
        limit: name,
        window: windowName(decision.window.seconds),
        max_requests: decision.window.points,
        retry_after_seconds: retryAfter,
      },
    });
  }
}
