import { Router } from "express";
import type { Db } from "@router/db";
import { notFound } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { requirePermission } from "@router/access";
import { requireInferenceKey } from "../access/credentials";
import { decodeCursor, toPage } from "../paging/keyset";
import { queryOf, windowStart } from "../paging/query-params";
import { renderAttempt } from "../upstream/attempt-row";
import { renderGenerationRecord } from "./generation-record";
import { attemptsOfRequest, findRequest, listRequests } from "./request-queries";
import type { RequestRow } from "./request-row";
import { priceVersionIdsOf, renderRequestRecord, renderUsageLines, contentFilterLabelsOf, droppedToolsOf, cacheTokensOf } from "./request-row";
import { activity } from "@router/management-api";

// The query schemas as the API description gives them (@router/management-api).
const activityQuery = activity.activityQuery;
const generationQuery = activity.generationQuery;

const keyOf = (r: RequestRow) => (r.key_hash === null ? null : { hash: r.key_hash, name: r.key_name });

export interface RequestRoutesDeps {
  db: Db;
  clock: Clock;
}

export function requestRoutes(deps: RequestRoutesDeps): Router {
  const router = Router();

  router.get("/v1/activity", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const q = parseInput(activityQuery, queryOf(req.query), "");
    const position = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const rows = await listRequests(
      deps.db,
      identity.orgId,
      {
        since: windowStart(deps.clock.now(), q.days),
        servedModel: q.model,
        provider: q.provider,
        workspaceId: q.workspace,
        agent: q.agent,
        status: q.status,
        byok: q.byok,
        appId: q.app,
        keyHash: q.key,
      },
      position,
      q.limit + 1,
    );
    // Asked for, each row names its key, so a list can show and filter by it (as the detail names it).
    res.json(toPage(rows, q.limit, q.include === "key" ? (r) => ({ ...renderRequestRecord(r), key: keyOf(r) }) : renderRequestRecord));
  });

  router.get("/v1/activity/requests/:id", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const row = await findRequest(deps.db, identity.orgId, req.params.id);
    if (!row) throw notFound("request");
    const attempts = await attemptsOfRequest(deps.db, identity.orgId, row.id);
    res.json({
      data: {
        ...renderRequestRecord(row),
        key: keyOf(row),
        session_id: row.session_id,
        run_id: row.run_id,
        content_filter_labels: contentFilterLabelsOf(row),
        dropped_tools: droppedToolsOf(row),
        ...cacheTokensOf(row),
        usage_lines: renderUsageLines(row),
        price_version_ids: priceVersionIdsOf(row),
        attempts: attempts.map(renderAttempt),
      },
    });
  });

  router.get("/v1/generation", async (req, res) => {
    const identity = identityOf(req);
    requireInferenceKey(identity);
    const q = parseInput(generationQuery, queryOf(req.query), "");
    const row = await findRequest(deps.db, identity.orgId, q.id);
    if (!row) throw notFound("generation");
    res.json({ data: renderGenerationRecord(row) });
  });

  return router;
}
