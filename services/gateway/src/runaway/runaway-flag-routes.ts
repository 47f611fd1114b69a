import { Router, type Request, type Response } from "express";
import { DomainError } from "@router/errors";
import { signIdentity, type IdentitySigningKey } from "@router/http-kit";
import type { Manage } from "../auth/management-auth";
import { principalIdentity, requirePrincipal } from "../auth/principal";
import type { AuthCache } from "../auth/auth-cache";
import type { UpstreamProxy, UpstreamTarget } from "../proxy/upstream-proxy";

export interface RunawayFlagRoutesDeps {
  /** Keys as authentication sees them (the console owns them): whether each flagged key is paused. */
  authCache: AuthCache;
  manage: Manage;
  proxy: UpstreamProxy;
  identityKey: IdentitySigningKey;
  runawayUrl: string;
}

interface FlagRow {
  key_hash?: unknown;
  [field: string]: unknown;
}

function flagRowsOf(body: unknown): FlagRow[] | null {
  if (typeof body !== "object" || body === null) return null;
  const data = (body as { data?: unknown }).data;
  return Array.isArray(data) && data.every((row) => typeof row === "object" && row !== null) ? (data as FlagRow[]) : null;
}

/**
 * `GET /v1/alerts/runaway`: the runaway service owns the flags, the console the keys. The list
 * comes from runaway with the caller's signed identity (runaway checks the role), and the gateway
 * adds `key_paused`, whether each flagged key is paused, from its auth cache (ten seconds at most). A flag
 * on an agent has no key: `key_paused` is false.
 */
export function runawayFlagRoutes(deps: RunawayFlagRoutesDeps): Router {
  const router = Router();
  const runaway: UpstreamTarget = { service: "runaway", baseUrl: deps.runawayUrl };

  router.get("/v1/alerts/runaway", deps.manage("read"), async (req: Request, res: Response) => {
    const principal = requirePrincipal(res);
    // Signed with the wall clock, not the injected one: the receiving process checks its age.
    const identity = await signIdentity(principalIdentity(principal), deps.identityKey);
    const answer = await deps.proxy.fetchJson(req, runaway, identity);
    if (answer.status !== 200) {
      res.status(answer.status).json(answer.body);
      return;
    }
    const rows = flagRowsOf(answer.body);
    if (!rows) throw new DomainError("router.runaway_unavailable", "the runaway service answered an unexpected shape", { status: 503 });
    const hashes = rows.map((r) => r.key_hash).filter((h): h is string => typeof h === "string");
    const paused = new Set<string>();
    await Promise.all(
      [...new Set(hashes)].map(async (hash) => {
        const key = await deps.authCache.get(hash);
        if (key && key.orgId === principal.orgId && key.paused && !key.disabled) paused.add(hash);
      }),
    );
    const data = rows.map((row) => ({ ...row, key_paused: typeof row.key_hash === "string" && paused.has(row.key_hash) }));
    res.json({ ...(answer.body as object), data });
  });

  return router;
}
