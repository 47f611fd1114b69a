import type { Db, Queryable } from "@router/db";
import { toNanos } from "@router/money";
import type { RunStatus } from "./run-states";
import type { PauseReason, RunState } from "./run-turns";
import { holdLine, type HoldLine, type StoredLine } from "../holds/store";

/** A run as stored: its limits, counters and timestamps. */
export interface Run extends RunState {
  id: string;
  orgId: string;
  goal: string | null;
  modelPolicy: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
}

/** One turn of a run: a chat completion that named it. */
export interface RunTurnRow {
  requestId: string;
  turn: number;
  state: "admitted" | "served" | "failed" | "expired";
  reserved: bigint;
  cost: bigint;
  model: string;
  finishReason: string;
  toolCalls: number;
  failedToolCalls: number;
  promptTokens: number;
  cachedTokens: number;
  admittedAt: Date;
  settledAt: Date | null;
}

interface RunRecord {
  run_id: string;
  org_id: string;
  status: RunStatus;
  goal: string | null;
  budget_nanodollars: string | number;
  spent_nanodollars: string | number;
  reserved_nanodollars: string | number;
  max_turns: number | null;
  turns_used: number;
  max_tool_calls: number | null;
  tool_calls_used: number;
  model_policy: Record<string, unknown>;
  max_cost_per_minute_nanodollars: string | number | null;
  max_tool_calls_without_progress: number | null;
  tool_calls_without_progress: number;
  minute_start: Date | string | null;
  minute_spent_nanodollars: string | number;
  pause_reason: PauseReason | null;
  paused_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  closed_at: Date | string | null;
}

const date = (v: Date | string): Date => new Date(v);
const dateOrNull = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

function runOf(r: RunRecord): Run {
  return {
    id: r.run_id,
    orgId: r.org_id,
    status: r.status,
    goal: r.goal,
    budget: toNanos(r.budget_nanodollars),
    spent: toNanos(r.spent_nanodollars),
    reserved: toNanos(r.reserved_nanodollars),
    maxTurns: r.max_turns,
    turnsUsed: r.turns_used,
    maxToolCalls: r.max_tool_calls,
    toolCallsUsed: r.tool_calls_used,
    modelPolicy: r.model_policy,
    maxCostPerMinute: r.max_cost_per_minute_nanodollars === null ? null : toNanos(r.max_cost_per_minute_nanodollars),
    maxToolCallsWithoutProgress: r.max_tool_calls_without_progress,
    toolCallsWithoutProgress: r.tool_calls_without_progress,
    minuteStart: dateOrNull(r.minute_start),
    minuteSpent: toNanos(r.minute_spent_nanodollars),
    pauseReason: r.pause_reason,
    pausedAt: dateOrNull(r.paused_at),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    closedAt: dateOrNull(r.closed_at),
  };
}

export async function insertRun(db: Queryable, run: Run): Promise<void> {
  await db.query(
    `INSERT INTO runs (run_id, org_id, status, goal, budget_nanodollars, max_turns, max_tool_calls, model_policy,
       max_cost_per_minute_nanodollars, max_tool_calls_without_progress, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5::bigint, $6, $7, $8::jsonb, $9::bigint, $10, $11::timestamptz, $11::timestamptz)`,
    [
      run.id,
      run.orgId,
      run.status,
      run.goal,
      run.budget.toString(),
      run.maxTurns,
      run.maxToolCalls,
      JSON.stringify(run.modelPolicy),
      run.maxCostPerMinute?.toString() ?? null,
      run.maxToolCallsWithoutProgress,
      run.createdAt.toISOString(),
    ],
  );
}

/** The organisation's run; undefined for an unknown one or another organisation's. `lock` takes its row lock (in a transaction). */
export async function findRun(q: Queryable, orgId: string, runId: string, lock = false): Promise<Run | undefined> {
  const r = await q.query<RunRecord>(`SELECT * FROM runs WHERE run_id = $1 AND org_id = $2${lock ? " FOR UPDATE" : ""}`, [runId, orgId]);
  const row = r.rows[0];
  return row && runOf(row);
}

/** A run as a leased turn reads it: with the lease's rows and the run of a turn already admitted for the request. */
export interface RunForLeasedTurn {
  run: Run | undefined;
  /** The open lease's rows; undefined when the organisation holds no open lease with that id. */
  leaseLines: HoldLine[] | undefined;
  /** The run the request is already a turn of; undefined when it is none's. */
  existingTurnRunId: string | undefined;
}

/** One read, no lock: what a turn admitted from a lease is decided on (then `takeTurnIfUnchanged`). */
export async function findRunForLeasedTurn(
  db: Queryable,
  input: { orgId: string; runId: string; leaseHoldId: string; requestId: string },
): Promise<RunForLeasedTurn> {
  const r = await db.query<RunRecord & { lease_lines: StoredLine[] | null; existing_turn_run_id: string | null; found: boolean }>(
    `SELECT r.*, r.run_id IS NOT NULL AS found,
       (SELECT h.lines FROM holds h WHERE h.hold_id = $3 AND h.org_id = $2 AND h.is_lease AND h.state = 'held') AS lease_lines,
       (SELECT t.run_id FROM run_turns t WHERE t.request_id = $4) AS existing_turn_run_id
     FROM (SELECT 1) AS one LEFT JOIN runs r ON r.run_id = $1 AND r.org_id = $2`,
    [input.runId, input.orgId, input.leaseHoldId, input.requestId],
    { prepare: true },
  );
  const row = r.rows[0];
  return {
    run: row?.found ? runOf(row) : undefined,
    leaseLines: row?.lease_lines?.map(holdLine),
    existingTurnRunId: row?.existing_turn_run_id ?? undefined,
  };
}

/** A turn to take: its request, the worst case it reserves on the run, and when its reservation expires. */
export interface TurnToTake {
  requestId: string;
  reserved: bigint;
  admittedAt: Date;
  expiresAt: Date;
}

/** The run's row takes a leased turn: `takeOpenTurn`'s condition ($6 the organisation, $7 the lease). */
const OPEN_RUN_TAKES_TURN = `org_id = $6 AND status = 'open'
       AND spent_nanodollars + reserved_nanodollars < budget_nanodollars
       AND (max_turns IS NULL OR turns_used < max_turns)
       AND (max_tool_calls IS NULL OR tool_calls_used < max_tool_calls)
       AND EXISTS (SELECT 1 FROM holds h WHERE h.hold_id = $7 AND h.org_id = $6 AND h.is_lease AND h.state = 'held')`;

/**
 * The common leased turn in one statement: takes the turn when the run is open and short of its
 * budget, turn and tool-call limits (the rules of `turnRefusal`, which decides every other case and
 * words every refusal) and the lease is still open. False when any of that fails or when the request
 * is already a turn: the caller then reads the run and decides.
 *
 * A run another writer holds locked (a settlement, a close, a turn decided under lock): with
 * `skipLocked` the turn is not taken (false) rather than waited for, which the statements of turns
 * that go one at a time need (see OpenTurns); without it, the statement waits and decides on the
 * run as that writer left it.
 */
export function takeOpenTurn(db: Queryable, t: OpenTurnToTake, opts: { skipLocked: boolean }): Promise<boolean> {
  return takeTurnWhere(
    db,
    t.runId,
    t,
    opts.skipLocked ? `${OPEN_RUN_TAKES_TURN} AND run_id IN (SELECT l.run_id FROM runs l WHERE l.run_id = $1 FOR UPDATE SKIP LOCKED)` : OPEN_RUN_TAKES_TURN,
    [t.orgId, t.leaseHoldId],
  );
}

/** A leased turn of an open run: `takeOpenTurn` takes one, `takeOpenTurns` several. */
export type OpenTurnToTake = TurnToTake & { orgId: string; runId: string; leaseHoldId: string };

/**
 * `takeOpenTurn` for turns of different runs in one statement (take_open_turns): the request ids of
 * the turns taken. A request id already a turn is not taken, nor is a turn of a run another writer
 * holds locked; a request id inserted meanwhile by another writer fails the whole statement with a
 * unique violation (23505), and nothing of it is kept.
 */
export async function takeOpenTurns(db: Queryable, turns: OpenTurnToTake[]): Promise<Set<string>> {
  const r = await db.query<{ request_id: string }>(
    `SELECT take_open_turns($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::timestamptz[]) AS request_id`,
    [
      turns.map((t) => t.runId),
      turns.map((t) => t.requestId),
      turns.map((t) => t.orgId),
      turns.map((t) => t.leaseHoldId),
      turns.map((t) => t.reserved.toString()),
      turns.map((t) => t.admittedAt.toISOString()),
      turns.map((t) => t.expiresAt.toISOString()),
    ],
    { prepare: true },
  );
  return new Set(r.rows.map((row) => row.request_id));
}

/**
 * Takes a turn on a run that is still as `seen` (what admission decided on), reserving its worst
 * case and inserting the turn, in one statement. False when the run changed meanwhile (another
 * turn, a settlement, a close): the caller decides again.
 */
export function takeTurnIfUnchanged(db: Queryable, seen: Run, t: TurnToTake): Promise<boolean> {
  return takeTurnWhere(
    db,
    seen.id,
    t,
    `status = $6 AND spent_nanodollars = $7::bigint AND reserved_nanodollars = $8::bigint AND turns_used = $9 AND tool_calls_used = $10`,
    [seen.status, seen.spent.toString(), seen.reserved.toString(), seen.turnsUsed, seen.toolCallsUsed],
  );
}

/**
 * Reserves `t` on the run and inserts it as the run's next turn, in one statement, when the run's
 * row also meets `condition` (its parameters from $6 on, `params`). False when it does not, or when
 * the request is already a turn (the unique request id: nothing changed, a read finds that turn).
 */
async function takeTurnWhere(db: Queryable, runId: string, t: TurnToTake, condition: string, params: unknown[]): Promise<boolean> {
  const r = await db
    .query(
      `WITH taken AS (
         UPDATE runs SET reserved_nanodollars = reserved_nanodollars + $2::bigint, turns_used = turns_used + 1, updated_at = $3::timestamptz
         WHERE run_id = $1 AND ${condition}
         RETURNING turns_used
       )
       INSERT INTO run_turns (request_id, run_id, turn, state, reserved_nanodollars, admitted_at, expires_at)
       SELECT $5, $1, taken.turns_used, 'admitted', $2::bigint, $3::timestamptz, $4::timestamptz FROM taken`,
      [runId, t.reserved.toString(), t.admittedAt.toISOString(), t.expiresAt.toISOString(), t.requestId, ...params],
      { prepare: true },
    )
    .catch((err: unknown) => {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION) return { rowCount: 0 };
      throw err;
    });
  return r.rowCount === 1;
}

export const UNIQUE_VIOLATION = "23505";

/** Newest first. */
export async function listRuns(db: Queryable, orgId: string, status: RunStatus | null, limit: number): Promise<Run[]> {
  const r = await db.query<RunRecord>(
    `SELECT * FROM runs WHERE org_id = $1 AND ($2::text IS NULL OR status = $2)
     ORDER BY created_at DESC, run_id DESC LIMIT $3`,
    [orgId, status, limit],
  );
  return r.rows.map(runOf);
}

/** Writes a run's status and counters (its row locked by the caller's transaction). */
export async function saveRun(q: Queryable, run: Run, now: Date, closedAt: Date | null = run.closedAt): Promise<void> {
  await q.query(
    `UPDATE runs SET status = $2, spent_nanodollars = $3::bigint, reserved_nanodollars = $4::bigint, turns_used = $5,
       tool_calls_used = $6, tool_calls_without_progress = $7, minute_start = $8::timestamptz,
       minute_spent_nanodollars = $9::bigint, pause_reason = $10, paused_at = $11::timestamptz,
       closed_at = $12::timestamptz, updated_at = $13::timestamptz
     WHERE run_id = $1`,
    [
      run.id,
      run.status,
      run.spent.toString(),
      run.reserved.toString(),
      run.turnsUsed,
      run.toolCallsUsed,
      run.toolCallsWithoutProgress,
      run.minuteStart?.toISOString() ?? null,
      run.minuteSpent.toString(),
      run.pauseReason,
      run.pausedAt?.toISOString() ?? null,
      closedAt?.toISOString() ?? null,
      now.toISOString(),
    ],
  );
}

export async function insertTurn(
  q: Queryable,
  t: { runId: string; requestId: string; turn: number; reserved: bigint; admittedAt: Date; expiresAt: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO run_turns (request_id, run_id, turn, state, reserved_nanodollars, admitted_at, expires_at)
     VALUES ($1, $2, $3, 'admitted', $4::bigint, $5::timestamptz, $6::timestamptz)`,
    [t.requestId, t.runId, t.turn, t.reserved.toString(), t.admittedAt.toISOString(), t.expiresAt.toISOString()],
  );
}

interface TurnRecord {
  request_id: string;
  run_id: string;
  turn: number;
  state: RunTurnRow["state"];
  reserved_nanodollars: string | number;
  cost_nanodollars: string | number;
  model: string;
  finish_reason: string;
  tool_calls: number;
  failed_tool_calls: number;
  prompt_tokens: string | number;
  cached_tokens: string | number;
  admitted_at: Date | string;
  settled_at: Date | string | null;
}

function turnOf(r: TurnRecord): RunTurnRow {
  return {
    requestId: r.request_id,
    turn: r.turn,
    state: r.state,
    reserved: toNanos(r.reserved_nanodollars),
    cost: toNanos(r.cost_nanodollars),
    model: r.model,
    finishReason: r.finish_reason,
    toolCalls: r.tool_calls,
    failedToolCalls: r.failed_tool_calls,
    promptTokens: Number(r.prompt_tokens),
    cachedTokens: Number(r.cached_tokens),
    admittedAt: date(r.admitted_at),
    settledAt: dateOrNull(r.settled_at),
  };
}

/** A request's turn with its run id (any organisation: the caller checks). */
export async function findTurn(q: Queryable, requestId: string): Promise<(RunTurnRow & { runId: string }) | undefined> {
  const r = await q.query<TurnRecord>(`SELECT * FROM run_turns WHERE request_id = $1`, [requestId]);
  const row = r.rows[0];
  return row && { ...turnOf(row), runId: row.run_id };
}

/** A run's turns in order. */
export async function turnsOf(db: Queryable, runId: string): Promise<RunTurnRow[]> {
  const r = await db.query<TurnRecord>(`SELECT * FROM run_turns WHERE run_id = $1 ORDER BY turn`, [runId]);
  return r.rows.map(turnOf);
}

/** Turns admitted and never settled by `now` (a gateway that crashed): their request ids and runs. */
export async function expiredTurns(db: Db, now: Date, limit: number): Promise<Array<{ requestId: string; runId: string; orgId: string }>> {
  const r = await db.query<{ request_id: string; run_id: string; org_id: string }>(
    `SELECT t.request_id, t.run_id, r.org_id FROM run_turns t JOIN runs r USING (run_id)
     WHERE t.state = 'admitted' AND t.expires_at <= $1::timestamptz ORDER BY t.expires_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return r.rows.map((row) => ({ requestId: row.request_id, runId: row.run_id, orgId: row.org_id }));
}
