import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import { toNanos, toUsd, type Clock } from "@router/money";
import { decodeCursor, toPage } from "../paging/keyset";
import { queryOf, windowStart } from "../paging/query-params";
import { isoOf } from "../requests/request-row";
import { recentSessions, sessionFigures, type SessionFigures, type SessionRow } from "./conversation-queries";
import { activity } from "@router/management-api";

const conversationsQuery = activity.conversationsQuery;

/**
 * The Conversation of the product's API (the service README). `started_at` and `last_seen_at` are the session's own; the
 * figures count its requests in the window. A session on the page always has one there (its last).
 */
function renderConversation(s: SessionRow, f: SessionFigures | undefined) {
  return {
    session_id: s.session_id,
    generations: Number(f?.generations ?? 0),
    errors: Number(f?.errors ?? 0),
    started_at: isoOf(s.started_at),
    last_seen_at: isoOf(s.last_seen_at),
    spend: toUsd(toNanos(f?.spend_nanodollars)),
    tokens: Number(f?.tokens ?? 0),
    models: f?.models ?? [],
    providers: f?.providers ?? [],
  };
}

export function conversationRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();

  /** Generations grouped by `session_id`, most recently active first; only requests that carried one. */
  router.get("/v1/activity/conversations", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const q = parseInput(conversationsQuery, queryOf(req.query), "");
    const position = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const since = windowStart(deps.clock.now(), q.days);
    const rows = await recentSessions(deps.db, identity.orgId, since, position, q.limit + 1);
    const onPage = rows.slice(0, q.limit).map((s) => s.session_id);
    const figures = await sessionFigures(deps.db, identity.orgId, onPage, since);
    res.json(
      toPage(
        rows,
        q.limit,
        (s) => renderConversation(s, figures.get(s.session_id)),
        (s) => ({ createdAt: new Date(s.last_seen_at), id: s.session_id }),
      ),
    );
  });

  return router;
}
