import type { Nanodollars, WindowKind } from "@router/money";
import type { CeilingRule } from "../holds/ceilings";
import { widestFirst } from "./budget-rules";

export interface WorkspaceBudget {
  workspaceId: string;
  window: WindowKind;
  limit: Nanodollars;
  includeByok: boolean;
}

export interface AgentBudget {
  agent: string;
  /** Scoped to that workspace's keys; null for the whole organisation. */
  workspaceId: string | null;
  window: WindowKind;
  limit: Nanodollars;
  includeByok: boolean;
  hard: boolean;
}

/** Every budget of one organisation. */
export interface OrgBudgets {
  workspaces: WorkspaceBudget[];
  agents: AgentBudget[];
}

/** Which requests a budget counts: the spend it finds already made is read with the same filter. */
export interface BudgetScope {
  workspaceId?: string;
  agent?: string;
}

/** A workspace budget binds every key of the workspace: one counter row per workspace and window. */
export function workspaceBudgetCeiling(b: WorkspaceBudget): CeilingRule {
  return {
    subjectKind: "workspace",
    subjectId: b.workspaceId,
    limit: b.limit,
    window: b.window,
    hard: true,
    includeByok: b.includeByok,
  };
}

/**
 * An agent budget: agent names are an organisation's own, so its counter row is named within the
 * organisation, or within the workspace for a budget scoped to one (ids are unique across
 * organisations, and a name never holds `/`).
 */
export function agentBudgetCeiling(orgId: string, b: AgentBudget): CeilingRule {
  return {
    subjectKind: "agent",
    subjectId: `${b.workspaceId ?? orgId}/${b.agent}`,
    limit: b.limit,
    window: b.window,
    hard: b.hard,
    includeByok: b.includeByok,
    subjectName: b.agent,
    ...(b.workspaceId ? { workspaceId: b.workspaceId } : {}),
  };
}

export function agentBudgetScope(b: AgentBudget): BudgetScope {
  return b.workspaceId ? { agent: b.agent, workspaceId: b.workspaceId } : { agent: b.agent };
}

/**
 * An organisation's budgets as ceilings, indexed for admission: a request looks up its workspace's
 * budgets and its agent's (organisation-wide, then those scoped to its workspace), each subject's
 * widest window first, so a refusal names the budget that frees last.
 */
export class BudgetCeilings {
  private readonly byWorkspace = new Map<string, CeilingRule[]>();
  private readonly byAgent = new Map<string, CeilingRule[]>();
  private readonly byWorkspaceAgent = new Map<string, CeilingRule[]>();
  readonly empty: boolean;

  constructor(orgId: string, budgets: OrgBudgets) {
    for (const b of widestFirst(budgets.workspaces)) push(this.byWorkspace, b.workspaceId, workspaceBudgetCeiling(b));
    for (const b of widestFirst(budgets.agents)) {
      const ceiling = agentBudgetCeiling(orgId, b);
      if (b.workspaceId) push(this.byWorkspaceAgent, `${b.workspaceId}/${b.agent}`, ceiling);
      else push(this.byAgent, b.agent, ceiling);
    }
    this.empty = budgets.workspaces.length === 0 && budgets.agents.length === 0;
    this.subjects = {
      workspaceIds: [...new Set(budgets.workspaces.map((b) => b.workspaceId))],
      agents: [...new Set(budgets.agents.map((b) => b.agent))],
    };
  }

  /** The workspaces and agents with a budget (what the gateway caches to skip Admit when none counts). */
  readonly subjects: { workspaceIds: string[]; agents: string[] };

  /** The budgets that count a request of this workspace ('' for none) naming this agent ('' for none), in precedence order. */
  of(workspaceId: string, agent: string): CeilingRule[] {
    if (this.empty) return NONE;
    const workspace = workspaceId ? this.byWorkspace.get(workspaceId) : undefined;
    const orgAgent = agent ? this.byAgent.get(agent) : undefined;
    const scopedAgent = agent && workspaceId ? this.byWorkspaceAgent.get(`${workspaceId}/${agent}`) : undefined;
    if (!workspace && !orgAgent && !scopedAgent) return NONE;
    return [...(workspace ?? NONE), ...(orgAgent ?? NONE), ...(scopedAgent ?? NONE)];
  }
}

const NONE: CeilingRule[] = [];

function push<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
