import { Router, type Request, type Response } from "express";
import { DomainError, invalid, notFound } from "@router/errors";
import type { Db } from "@router/db";
import { keys as described } from "@router/management-api";
import { parseInput } from "@router/http-kit";
import { fromUsd, type Clock } from "@router/money";
import type { ledger } from "@router/proto";
import { callingKeyHash, requirePrincipal, type Authorize } from "../auth/principal";
import { endSessionsOfKey } from "../sessions/session-store";
import { evictKeys, evictSessions, objectBody, type IdentityPublicKeys } from "@router/http-kit";
import { defaultWorkspaceOf, workspaceBelongsTo } from "../organisations/organisation-store";
import { isKeyHash, mintKey } from "@router/api-keys";
import { findKeyByHash, getKey, insertKey, listKeys, revokeKey, updateKey, type KeyChanges } from "./key-store";
import { measureKeyUsage } from "./key-usage";
import { callingKeyInfo, keyListRow, patchedKey } from "./key-view";

export interface KeyRoutesDeps {
  db: Db;
  /** Verifies the calling inference key of `GET /v1/key`. */
  identityKeys: IdentityPublicKeys;
  authorize: Authorize;
  ledger: ledger.LedgerServiceClient;
  pepper: string;
  clock: Clock;
  grpcDeadlineMs: number;
}

// The bodies and the query are the descriptions' (@router/management-api); the fields they name are all a body may carry.
const CREATE_FIELDS = Object.keys(described.createKeyBody.shape);
const PATCH_FIELDS = Object.keys(described.patchKeyBody.shape);
const FIXED_ON_PATCH: Record<string, string> = {
  class: "cannot change; create a key of the other class instead",
  name: "cannot change",
  key: "the secret cannot change; create a new key and revoke this one",
  secret: "the secret cannot change; create a new key and revoke this one",
  hash: "cannot change",
  prefix: "cannot change",
  label: "cannot change",
};

function hashParam(req: Request): string {
  const hash = String(req.params.hash ?? "");
  if (!isKeyHash(hash)) throw invalid("hash", "expected the 64-character hex hash of a key");
  return hash;
}

/** Keys: `GET /v1/key` (inference), and list, create, update, revoke (management). */
export function keyRoutes(deps: KeyRoutesDeps): Router {
  const router = Router();
  const usageOpts = { deadlineMs: deps.grpcDeadlineMs, clock: deps.clock };

  router.get("/v1/key", async (req: Request, res: Response) => {
    const key = await findKeyByHash(deps.db, await callingKeyHash(req, deps.identityKeys));
    // Revoked in the moments since the gateway's cache admitted it.
    if (!key || key.disabled) throw new DomainError("unauthorized", "Authorization: unknown or revoked key", { details: { field: "Authorization" } });
    const usage = await measureKeyUsage(deps.ledger, [key], usageOpts);
    res.json({ data: callingKeyInfo(key, usage.get(key.hash)?.usedNanos ?? 0n) });
  });

  router.get("/v1/keys", deps.authorize("read"), async (req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const query = parseInput(described.listKeysQuery, req.query, "query");
    const keys = await listKeys(deps.db, orgId, query.include_disabled);
    const usage = await measureKeyUsage(deps.ledger, keys.filter((k) => !k.disabled), usageOpts);
    res.json({ data: keys.map((k) => keyListRow(k, usage.get(k.hash))), next_cursor: null });
  });

  router.post("/v1/keys", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const caller = requirePrincipal(res);
    const body = parseInput(described.createKeyBody, objectBody(req, CREATE_FIELDS));
    let workspace = body.workspace_id ?? caller.workspaceId;
    if (body.workspace_id !== undefined && !(await workspaceBelongsTo(deps.db, caller.orgId, body.workspace_id))) {
      throw notFound("workspace");
    }
    workspace ??= await defaultWorkspaceOf(deps.db, caller.orgId);
    const minted = mintKey(body.class, deps.pepper);
    await insertKey(
      deps.db,
      caller.orgId,
      minted,
      {
        name: body.name ?? null,
        workspaceId: workspace,
        limitNanos: body.limit === undefined || body.limit === null ? null : fromUsd(body.limit),
        limitReset: body.limit_reset ?? null,
        limitMode: body.limit_mode,
        includeByokInLimit: body.include_byok_in_limit,
        // The person creating the key owns it: a management key acts with their role, never more;
        // an inference key carries them as its member, so their guardrails bind its requests.
        userId: caller.userId,
      },
      deps.clock.now(),
    );
    res.status(201).json({ data: { key: minted.plaintext, hash: minted.hash, name: body.name ?? null, class: minted.class } });
  });

  router.patch("/v1/keys/:hash", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const hash = hashParam(req);
    const body = parseInput(described.patchKeyBody, objectBody(req, PATCH_FIELDS, FIXED_ON_PATCH));
    if (Object.values(body).every((v) => v === undefined)) {
      throw invalid("body", `at least one of ${PATCH_FIELDS.join(", ")} is required`);
    }
    const existing = await getKey(deps.db, orgId, hash);
    if (!existing) throw notFound("key");
    if (existing.disabled) throw new DomainError("conflict", "key is revoked; it can no longer be changed");
    if (body.workspace_id !== undefined && !(await workspaceBelongsTo(deps.db, orgId, body.workspace_id))) {
      throw notFound("workspace");
    }
    const changes: KeyChanges = {
      limitNanos: body.limit === undefined ? undefined : body.limit === null ? null : fromUsd(body.limit),
      limitReset: body.limit_reset,
      limitMode: body.limit_mode,
      includeByokInLimit: body.include_byok_in_limit,
      workspaceId: body.workspace_id,
      paused: body.paused,
    };
    const updated = await updateKey(deps.db, orgId, hash, changes, deps.clock.now());
    evictKeys(res, [hash]);
    // Revoked between the read above and the update: revocation wins.
    if (!updated) throw new DomainError("conflict", "key is revoked; it can no longer be changed");
    res.json({ data: patchedKey(updated) });
  });

  router.delete("/v1/keys/:hash", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const hash = hashParam(req);
    const now = deps.clock.now();
    // The key and every dashboard session it was exchanged for end together.
    const { revoked, sessions } = await deps.db.tx(async (q) => {
      const found = await revokeKey(q, orgId, hash, now);
      return { revoked: found, sessions: found ? await endSessionsOfKey(q, hash, now) : [] };
    });
    evictKeys(res, [hash]);
    evictSessions(res, sessions);
    if (!revoked) throw notFound("key");
    res.json({ data: { deleted: true } });
  });

  return router;
}
