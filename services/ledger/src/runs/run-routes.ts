import { randomBytes } from "node:crypto";
import { Router, type Request } from "express";
import { requirePermission, type Permission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid } from "@router/errors";
import { identityOf, parseInput, type Identity } from "@router/http-kit";
import { fromUsd, type Clock } from "@router/money";
import { objectBody } from "../budgets/workspace-budget-routes";
import { closeRunBody, listRunsQuery, openRunBody, RUN_ID } from "./run-rules";
import { nextStatus, type RunEvent } from "./run-states";
import { findRun, insertRun, listRuns, saveRun, turnsOf, type Run } from "./run-store";
import { resumed } from "./run-turns";
import { runTreeView, runView } from "./run-view";

export interface RunRoutesDeps {
  db: Db;
  clock: Clock;
}

/**
 * An inference key reaches every run route of its organisation (the agent's own); a management key
 * or session needs `permission` for its role.
 */
function allow(identity: Identity, permission: Permission): void {
  if (identity.credential !== "inference") requirePermission(identity, permission);
}

function runIdParam(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!RUN_ID.test(id)) throw invalid("id", "expected a run id (run_...)");
  return id;
}

function runNotFound(): DomainError {
  return new DomainError("not_found", "run not found");
}

/** A move the state table does not have: 409 naming the run's status. */
function notAllowed(run: Run, event: RunEvent): DomainError {
  const what = event === "resume" ? "only a paused run resumes" : "it is already closed";
  return new DomainError("conflict", `This run is ${run.status}; ${what}.`, { details: { status: run.status } });
}

/**
 * `GET /v1/runs`, `POST /v1/runs` (an inference key only), `GET /v1/runs/{id}` (the run and its
 * tree), `POST /v1/runs/{id}/close` and `POST /v1/runs/{id}/resume`. Runs belong to the caller's
 * organisation; another organisation's id is a 404.
 */
export function runRoutes(deps: RunRoutesDeps): Router {
  const router = Router();

  router.get("/v1/runs", async (req, res) => {
    const identity = identityOf(req);
    allow(identity, "usage:read");
    const query = parseInput(listRunsQuery, req.query, "query");
    const runs = await listRuns(deps.db, identity.orgId, query.status ?? null, query.limit);
    res.json({ data: runs.map(runView), next_cursor: null });
  });

  router.post("/v1/runs", async (req, res) => {
    const identity = identityOf(req);
    if (identity.credential !== "inference") {
      // The agent opens its run; a person or a management key only watches and stops it.
      throw new DomainError("permission_denied", "a run is opened with an inference key, not a management key or session", {
        details: { credential: identity.credential },
      });
    }
    const body = parseInput(openRunBody, objectBody(req));
    const now = deps.clock.now();
    const run: Run = {
      id: `run_${randomBytes(12).toString("hex")}`,
      orgId: identity.orgId,
      status: "open",
      goal: body.goal ?? null,
      budget: fromUsd(body.budget_usd),
      spent: 0n,
      reserved: 0n,
      maxTurns: body.max_turns ?? null,
      turnsUsed: 0,
      maxToolCalls: body.max_tool_calls ?? null,
      toolCallsUsed: 0,
      modelPolicy: body.model_policy ?? {},
      maxCostPerMinute: body.max_cost_per_minute_usd == null ? null : fromUsd(body.max_cost_per_minute_usd),
      maxToolCallsWithoutProgress: body.max_tool_calls_without_progress ?? null,
      toolCallsWithoutProgress: 0,
      minuteStart: null,
      minuteSpent: 0n,
      pauseReason: null,
      pausedAt: null,
      createdAt: now,
      updatedAt: now,
      closedAt: null,
    };
    await insertRun(deps.db, run);
    res.status(201).json({ data: runView(run) });
  });

  router.get("/v1/runs/:id", async (req, res) => {
    const identity = identityOf(req);
    allow(identity, "usage:read");
    // The run and its turns from one snapshot: a turn's settlement changes both in one statement,
    // and two separate reads could show a turn settled beside the run's counters from before it.
    const tree = await deps.db.tx(async (q) => {
      await q.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      const found = await findRun(q, identity.orgId, runIdParam(req));
      return found ? runTreeView(found, await turnsOf(q, found.id)) : null;
    });
    if (!tree) throw runNotFound();
    res.json({ data: tree });
  });

  router.post("/v1/runs/:id/close", async (req, res) => {
    const identity = identityOf(req);
    allow(identity, "config:write");
    const id = runIdParam(req);
    const body = parseInput(closeRunBody, objectBody(req));
    const event: RunEvent = body.status === "completed" ? "complete" : "cancel";
    res.json({ data: runView(await move(deps, identity.orgId, id, event)) });
  });

  router.post("/v1/runs/:id/resume", async (req, res) => {
    const identity = identityOf(req);
    allow(identity, "config:write");
    const id = runIdParam(req);
    res.json({ data: runView(await move(deps, identity.orgId, id, "resume")) });
  });

  return router;
}

/** Applies a caller's move under the run's lock, if the state table has it (409 otherwise). */
async function move(deps: RunRoutesDeps, orgId: string, id: string, event: RunEvent): Promise<Run> {
  return deps.db.tx(async (q) => {
    const run = await findRun(q, orgId, id, true);
    if (!run) throw runNotFound();
    const to = nextStatus(run.status, event);
    if (!to) throw notAllowed(run, event);
    const now = deps.clock.now();
    const moved: Run = event === "resume" ? { ...run, ...resumed(run) } : { ...run, status: to, closedAt: now };
    await saveRun(q, moved, now);
    return { ...moved, updatedAt: now };
  });
}
