import { Router, type NextFunction, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { DomainError } from "@router/errors";
import { IDENTITY_HEADER, signIdentity } from "@router/http-kit";
import type { LoadingCacheStats } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Manage } from "../auth/management-auth";
import { principalIdentity, requirePrincipal } from "../auth/principal";

export const DIAGNOSTICS_PATH = "/v1/health";
/** Routing's internal route with the age of its endpoint health snapshot. */
const ROUTING_DIAGNOSTICS_PATH = "/internal/diagnostics";
const ROUTING_TIMEOUT_MS = 1_000;

/** The counters of one cache; null for a cache this deployment's gateway does not hold. */
export type CacheCounters = { hit: number; miss: number; stale: number; size: number } | null;

export interface DiagnosticsDeps {
  db: Db;
  log: Logger;
  manage: Manage;
  version: string;
  rateLimiting: () => { store: "memory" | "redis"; shared: boolean };
  /** Each cache's counters, read at request time; a missing reader reports null. */
  caches: Partial<Record<"auth" | "guardrails" | "budgets" | "byok" | "catalog", () => LoadingCacheStats | null>>;
  routingUrl: string;
  internalSecret: string;
}

const CACHE_NAMES = ["auth", "guardrails", "budgets", "byok", "catalog"] as const;

function counters(stats: LoadingCacheStats | null | undefined): CacheCounters {
  return stats ? { hit: stats.hits, miss: stats.misses, stale: stats.stale, size: stats.size } : null;
}

function hidden(): DomainError {
  return new DomainError("not_found", `no route for GET ${DIAGNOSTICS_PATH}`);
}

/**
 * `GET /v1/health`: operational diagnostics for the operator organisation's management keys and
 * sessions. Anyone else, without a credential too, gets the same 404 as an unknown path, so the
 * route does not reveal that it exists; only a 429 of the management limit passes through.
 */
export function diagnosticsRoute(deps: DiagnosticsDeps): Router {
  const router = Router();
  const management = deps.manage("read");
  const operatorOnly = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      await management(req, res, () => undefined);
    } catch (err) {
      if (err instanceof DomainError && err.code === "rate_limited") throw err;
      res.removeHeader("WWW-Authenticate");
      throw hidden();
    }
    if (!requirePrincipal(res).operator) throw hidden();
    next();
  };

  const endpointHealthAge = async (res: Response): Promise<number | null> => {
    try {
      const identity = await signIdentity(principalIdentity(requirePrincipal(res)), deps.internalSecret);
      const answer = await fetch(`${deps.routingUrl}${ROUTING_DIAGNOSTICS_PATH}`, {
        headers: { [IDENTITY_HEADER]: identity },
        signal: AbortSignal.timeout(ROUTING_TIMEOUT_MS),
      });
      if (!answer.ok) return null;
      const body = (await answer.json()) as { endpoint_health_age_ms?: unknown };
      return typeof body.endpoint_health_age_ms === "number" ? body.endpoint_health_age_ms : null;
    } catch (err) {
      deps.log.warn({ err }, "gateway.diagnostics.routing_unreachable");
      return null;
    }
  };

  router.get(DIAGNOSTICS_PATH, operatorOnly, async (_req: Request, res: Response) => {
    const database = deps.db.query("SELECT 1").then(
      () => "ok" as const,
      () => "error" as const,
    );
    const [status, age] = await Promise.all([database, endpointHealthAge(res)]);
    const caches = Object.fromEntries(CACHE_NAMES.map((name) => [name, counters(deps.caches[name]?.())]));
    res.json({
      data: { status, version: deps.version, rate_limiting: deps.rateLimiting(), caches, endpoint_health_age_ms: age },
    });
  });
  return router;
}
