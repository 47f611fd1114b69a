import type { Db, Queryable } from "@router/db";
import { toNanos, type WindowKind } from "@router/money";
import { inWindowAt, type CeilingRule } from "../holds/ceilings";
import {
  agentBudgetCeiling,
  agentBudgetScope,
  workspaceBudgetCeiling,
  type AgentBudget,
  type BudgetScope,
  type OrgBudgets,
  type WorkspaceBudget,
} from "./budget-ceilings";
import { checkNarrowerIsSmaller, narrowestFirst } from "./budget-rules";

interface WorkspaceBudgetRow {
  workspace_id: string;
  window_kind: WindowKind;
  limit_nanodollars: string | number | bigint;
  include_byok: boolean;
}

interface AgentBudgetRow {
  agent: string;
  workspace_id: string;
  window_kind: WindowKind;
  limit_nanodollars: string | number | bigint;
  include_byok: boolean;
  hard: boolean;
}

const workspaceBudget = (r: WorkspaceBudgetRow): WorkspaceBudget => ({
  workspaceId: r.workspace_id,
  window: r.window_kind,
  limit: toNanos(r.limit_nanodollars),
  includeByok: r.include_byok,
});

const agentBudget = (r: AgentBudgetRow): AgentBudget => ({
  agent: r.agent,
  workspaceId: r.workspace_id === "" ? null : r.workspace_id,
  window: r.window_kind,
  limit: toNanos(r.limit_nanodollars),
  includeByok: r.include_byok,
  hard: r.hard,
});

/** Every budget of an organisation (what admission checks requests against). */
export async function loadOrgBudgets(q: Queryable, orgId: string): Promise<OrgBudgets> {
  const [workspaces, agents] = await Promise.all([
    q.query<WorkspaceBudgetRow>(
      "SELECT workspace_id, window_kind, limit_nanodollars, include_byok FROM workspace_budgets WHERE org_id = $1",
      [orgId],
    ),
    q.query<AgentBudgetRow>(
      "SELECT agent, workspace_id, window_kind, limit_nanodollars, include_byok, hard FROM agent_budgets WHERE org_id = $1",
      [orgId],
    ),
  ]);
  return { workspaces: workspaces.rows.map(workspaceBudget), agents: agents.rows.map(agentBudget) };
}

/** The budgets of these workspaces of the organisation, narrowest window first; unknown ones have none. */
export async function workspaceBudgetsOf(q: Queryable, orgId: string, workspaceIds: string[]): Promise<WorkspaceBudget[]> {
  const r = await q.query<WorkspaceBudgetRow>(
    `SELECT workspace_id, window_kind, limit_nanodollars, include_byok FROM workspace_budgets
     WHERE org_id = $1 AND workspace_id = ANY ($2::text[])`,
    [orgId, workspaceIds],
  );
  return narrowestFirst(r.rows.map(workspaceBudget));
}

/** The budgets of these agents of the organisation (null: of every agent), narrowest window first. */
export async function agentBudgetsOf(q: Queryable, orgId: string, agents: string[] | null): Promise<AgentBudget[]> {
  const r = await q.query<AgentBudgetRow>(
    `SELECT agent, workspace_id, window_kind, limit_nanodollars, include_byok, hard FROM agent_budgets
     WHERE org_id = $1 AND ($2::text[] IS NULL OR agent = ANY ($2::text[]))
     ORDER BY agent, workspace_id`,
    [orgId, agents],
  );
  return narrowestFirst(r.rows.map(agentBudget));
}

/**
 * Sets a workspace budget (replacing the one in its window). Refused with a 400 naming `limit_usd`
 * when it breaks the narrower-is-smaller rule against the workspace's other budgets, checked under a
 * lock on the workspace's budgets so two writes cannot each pass alone.
 */
export function putWorkspaceBudget(db: Db, orgId: string, b: WorkspaceBudget, now: Date): Promise<void> {
  return db.tx(async (q) => {
    await lockSubject(q, `workspace/${orgId}/${b.workspaceId}`);
    const current = await workspaceBudgetsOf(q, orgId, [b.workspaceId]);
    checkNarrowerIsSmaller(b, current);
    const before = current.find((c) => c.window === b.window);
    await q.query(
      `INSERT INTO workspace_budgets (org_id, workspace_id, window_kind, limit_nanodollars, include_byok, created_at, updated_at)
       VALUES ($1, $2, $3, $4::bigint, $5, $6::timestamptz, $6::timestamptz)
       ON CONFLICT (org_id, workspace_id, window_kind) DO UPDATE
         SET limit_nanodollars = EXCLUDED.limit_nanodollars, include_byok = EXCLUDED.include_byok,
             updated_at = EXCLUDED.updated_at`,
      [orgId, b.workspaceId, b.window, b.limit.toString(), b.includeByok, now.toISOString()],
    );
    if (!before || before.includeByok !== b.includeByok) {
      await countSpendAlreadyMade(q, orgId, workspaceBudgetCeiling(b), { workspaceId: b.workspaceId }, now);
    }
  });
}

export async function deleteWorkspaceBudget(db: Db, orgId: string, workspaceId: string, window: WindowKind): Promise<boolean> {
  const r = await db.query(
    "DELETE FROM workspace_budgets WHERE org_id = $1 AND workspace_id = $2 AND window_kind = $3",
    [orgId, workspaceId, window],
  );
  return r.rowCount > 0;
}

/**
 * Sets an agent budget (organisation-wide, or scoped to a workspace), replacing the one in its
 * window and scope. The narrower-is-smaller rule holds among the budgets of one scope.
 */
export function putAgentBudget(db: Db, orgId: string, b: AgentBudget, now: Date): Promise<void> {
  const scope = b.workspaceId ?? "";
  return db.tx(async (q) => {
    await lockSubject(q, `agent/${orgId}/${scope}/${b.agent}`);
    const current = (await agentBudgetsOf(q, orgId, [b.agent])).filter((c) => (c.workspaceId ?? "") === scope);
    checkNarrowerIsSmaller(b, current);
    const before = current.find((c) => c.window === b.window);
    await q.query(
      `INSERT INTO agent_budgets
         (org_id, agent, workspace_id, window_kind, limit_nanodollars, include_byok, hard, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::bigint, $6, $7, $8::timestamptz, $8::timestamptz)
       ON CONFLICT (org_id, agent, workspace_id, window_kind) DO UPDATE
         SET limit_nanodollars = EXCLUDED.limit_nanodollars, include_byok = EXCLUDED.include_byok,
             hard = EXCLUDED.hard, updated_at = EXCLUDED.updated_at`,
      [orgId, b.agent, scope, b.window, b.limit.toString(), b.includeByok, b.hard, now.toISOString()],
    );
    if (!before || before.includeByok !== b.includeByok) {
      await countSpendAlreadyMade(q, orgId, agentBudgetCeiling(orgId, b), agentBudgetScope(b), now);
    }
  });
}

export async function deleteAgentBudget(
  db: Db,
  orgId: string,
  agent: string,
  workspaceId: string | null,
  window: WindowKind,
): Promise<boolean> {
  const r = await db.query(
    "DELETE FROM agent_budgets WHERE org_id = $1 AND agent = $2 AND workspace_id = $3 AND window_kind = $4",
    [orgId, agent, workspaceId ?? "", window],
  );
  return r.rowCount > 0;
}

/** Serialises budget writes of one subject (released at commit). */
async function lockSubject(q: Queryable, subject: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [subject]);
}

/**
 * A budget counts the spend already made in its current window, not only what comes after it is
 * set: its counter row for the window starts from the requests recorded so far (usage_days, whole
 * UTC days, which windows are made of). A row that exists already (the budget was there before,
 * or another one of the subject in the same window) keeps the larger of the two.
 */
async function countSpendAlreadyMade(q: Queryable, orgId: string, rule: CeilingRule, scope: BudgetScope, now: Date): Promise<void> {
  const c = inWindowAt(rule, now);
  const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : null);
  await q.query(
    `INSERT INTO spend_counters AS sc
       (subject_kind, subject_id, window_kind, window_start, window_end, settled_nanodollars,
        checked_limit_nanodollars, checked_hard)
     SELECT $1, $2, $3, $4::timestamptz, $5::timestamptz,
            coalesce(sum(u.list_spend_nanodollars - CASE WHEN $6 THEN 0 ELSE u.byok_list_spend_nanodollars END), 0),
            $7::bigint, $8
     FROM usage_days u
     WHERE u.org_id = $9 AND u.day >= $10::date AND ($11::date IS NULL OR u.day < $11::date)
       AND ($12::text IS NULL OR u.workspace_id = $12) AND ($13::text IS NULL OR u.agent = $13)
     ON CONFLICT (subject_kind, subject_id, window_kind, window_start) DO UPDATE
       SET settled_nanodollars = greatest(sc.settled_nanodollars, EXCLUDED.settled_nanodollars)`,
    [
      c.subjectKind,
      c.subjectId,
      c.window,
      c.windowStart.toISOString(),
      c.windowEnd ? c.windowEnd.toISOString() : null,
      c.includeByok,
      c.limit.toString(),
      c.hard,
      orgId,
      day(c.windowStart),
      day(c.windowEnd),
      scope.workspaceId ?? null,
      scope.agent ?? null,
    ],
  );
}
