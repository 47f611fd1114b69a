import { Router, type NextFunction, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { DomainError } from "@router/errors";
import { IDENTITY_HEADER, signIdentity, type IdentitySigningKey } from "@router/http-kit";
import type { LoadingCacheStats } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import { z } from "zod";
import type { Manage } from "../auth/management-auth";
import { principalIdentity, requirePrincipal } from "../auth/principal";

export const DIAGNOSTICS_PATH = "/v1/health";
/** Routing's internal route: the age of its endpoint health snapshot and its caches' counters. */
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
  /**
   * The counters of the caches this gateway holds, read at request time; `guardrails` and
   * `catalog` are routing's and come from its diagnostics. A cache with no reader reports null.
   */
  caches: Partial<Record<"auth" | "budgets" | "byok" | "plans", () => LoadingCacheStats | null>>;
  routingUrl: string;
  identityKey: IdentitySigningKey;
}

const GATEWAY_CACHES = ["auth", "budgets", "byok", "plans"] as const;
const ROUTING_CACHES = ["guardrails", "catalog"] as const;

function counters(stats: LoadingCacheStats | null | undefined): CacheCounters {
  return stats ? { hit: stats.hits, miss: stats.misses, stale: stats.stale, size: stats.size } : null;
}

const countersSchema = z.object({ hits: z.number(), misses: z.number(), stale: z.number(), refreshes: z.number(), size: z.number() });
const routingDiagnostics = z.object({
  endpoint_health_age_ms: z.number().nullable().catch(null),
  caches: z.object({ guardrails: countersSchema.nullable().catch(null), catalog: countersSchema.nullable().catch(null) }).partial().catch({}),
});
type RoutingDiagnostics = z.infer<typeof routingDiagnostics>;

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

  const fromRouting = async (res: Response): Promise<RoutingDiagnostics | null> => {
    try {
      const identity = await signIdentity(principalIdentity(requirePrincipal(res)), deps.identityKey);
      const answer = await fetch(`${deps.routingUrl}${ROUTING_DIAGNOSTICS_PATH}`, {
        headers: { [IDENTITY_HEADER]: identity },
        signal: AbortSignal.timeout(ROUTING_TIMEOUT_MS),
      });
      if (!answer.ok) return null;
      const parsed = routingDiagnostics.safeParse(await answer.json());
      return parsed.success ? parsed.data : null;
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
    const [status, routing] = await Promise.all([database, fromRouting(res)]);
    const caches: Record<string, CacheCounters> = Object.fromEntries([
      ...GATEWAY_CACHES.map((name): [string, CacheCounters] => [name, counters(deps.caches[name]?.())]),
      ...ROUTING_CACHES.map((name): [string, CacheCounters] => [name, counters(routing?.caches[name])]),
    ]);
    res.json({
      data: { status, version: deps.version, rate_limiting: deps.rateLimiting(), caches, endpoint_health_age_ms: routing?.endpoint_health_age_ms ?? null },
    });
  });
  return router;
}
