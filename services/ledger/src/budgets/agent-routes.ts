import { Router, type Request } from "express";
import { ledger } from "@router/management-api";
import { requirePermission } from "@router/access";
import { invalid, notFound } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import { fromUsd, toUsd } from "@router/money";
import { agentActivity } from "../usage/usage-store";
import type { AgentBudget } from "./budget-ceilings";
import { AGENT_NAME, parseInterval } from "./budget-rules";
import { agentBudgetsOf, deleteAgentBudget, putAgentBudget } from "./budget-store";
import { objectBody, type BudgetRoutesDeps } from "./workspace-budget-routes";

const agentBudgetBody = ledger.agentBudgetBody;

/** An Agent budget (in the service README). */
export function agentBudgetView(b: AgentBudget) {
  return {
    agent: b.agent,
    interval: b.window,
    limit_usd: toUsd(b.limit),
    include_byok: b.includeByok,
    mode: b.hard ? "hard" : "soft",
    workspace_id: b.workspaceId,
  };
}

function agentParam(req: Request): string {
  const agent = String(req.params.agent ?? "");
  if (!AGENT_NAME.test(agent)) {
    throw invalid("agent", "1 to 64 letters, digits, '.', '_', ':' or '-', starting with a letter or digit");
  }
  return agent;
}

/** The workspace a budget is scoped to must be one the gateway checked for the caller (404 otherwise). */
function checkedScope(req: Request, id: string | null): void {
  if (id !== null && identityOf(req).workspace?.id !== id) throw notFound("workspace");
}

/**
 * `GET /v1/agents` (any role): every agent seen in the last 31 days plus every one with a budget,
 * most recently seen first, at most 500. `PUT` and `DELETE /v1/agents/{agent}/budgets/{interval}`
 * (config:write): organisation-wide, or scoped to a workspace (`workspace_id` in the body; in the
 * query to delete).
 */
export function agentRoutes(deps: BudgetRoutesDeps): Router {
  const router = Router();

  router.get("/v1/agents", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const budgeted = await agentBudgetsOf(deps.db, identity.orgId, null);
    const agents = await agentActivity(deps.db, identity.orgId, [...new Set(budgeted.map((b) => b.agent))], deps.clock.now());
    res.json({
      data: agents.map((a) => ({
        agent: a.agent,
        last_seen: a.lastSeen ? a.lastSeen.toISOString() : null,
        requests_this_month: a.requestsThisMonth,
        spend_this_month: toUsd(a.spendThisMonth),
        budgets: budgeted.filter((b) => b.agent === a.agent).map(agentBudgetView),
      })),
      next_cursor: null,
    });
  });

  router.put("/v1/agents/:agent/budgets/:interval", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const agent = agentParam(req);
    const window = parseInterval(req.params.interval);
    const body = parseInput(agentBudgetBody, objectBody(req));
    const scope = body.workspace_id ?? null;
    checkedScope(req, scope);
    const budget: AgentBudget = {
      agent,
      workspaceId: scope,
      window,
      limit: fromUsd(body.limit_usd),
      includeByok: body.include_byok,
      hard: body.mode === "hard",
    };
    await putAgentBudget(deps.db, identity.orgId, budget, deps.clock.now());
    deps.budgets.invalidate(identity.orgId);
    res.json({ data: agentBudgetView(budget) });
  });

  router.delete("/v1/agents/:agent/budgets/:interval", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const agent = agentParam(req);
    const window = parseInterval(req.params.interval);
    const scope = parseInput(ledger.agentBudgetDeleteQuery, { workspace_id: req.query.workspace_id }, "query")
      .workspace_id ?? null;
    checkedScope(req, scope);
    if (!(await deleteAgentBudget(deps.db, identity.orgId, agent, scope, window))) throw notFound(`${window} budget`);
    deps.budgets.invalidate(identity.orgId);
    res.json({ data: { deleted: true } });
  });

  return router;
}
