import { Router, type Request } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { notFound } from "@router/errors";
import { identityOf, parseInput, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Clock } from "@router/money";
import type { CatalogCache } from "../catalog/catalog-cache";
import { AssignmentBody, readGuardrailBody } from "./guardrail-body";
import type { GuardrailCache } from "./guardrail-cache";
import { assignGuardrail, createGuardrail, deleteGuardrail, listGuardrails, type StoredGuardrail } from "./guardrail-store";

export interface GuardrailRoutesDeps {
  db: Db;
  catalog: CatalogCache;
  guardrails: GuardrailCache;
  clock: Clock;
  identityKeys: IdentityPublicKeys;
}

const GUARDRAIL_ID = /^gr_[0-9a-f]{24}$/;

/**
 * The guardrail routes, scoped to the signed identity's organisation: reads for any role, writes
 * with `org:write` (owner or admin: a guardrail restricts keys and members, so a developer must not
 * lift the one assigned to them). Every write evicts the organisation from Plan's cache on every
 * replica.
 */
export function guardrailRoutes(deps: GuardrailRoutesDeps): Router {
  const router = Router();
  router.use("/v1/guardrails", requireIdentity(deps.identityKeys));
  const orgOf = (req: Request, permission: "read" | "org:write") => {
    const identity = identityOf(req);
    requirePermission(identity, permission);
    return identity.orgId;
  };
  const idOf = (req: Request) => {
    const id = String(req.params.id ?? "");
    if (!GUARDRAIL_ID.test(id)) throw notFound("guardrail");
    return id;
  };

  router.get("/v1/guardrails", async (req, res) => {
    const orgId = orgOf(req, "read");
    res.json({ data: (await listGuardrails(deps.db, orgId)).map(guardrailJson) });
  });

  router.post("/v1/guardrails", async (req, res) => {
    const orgId = orgOf(req, "org:write");
    const settings = readGuardrailBody(req.body, deps.catalog.snapshot());
    const created = await createGuardrail(deps.db, orgId, settings, deps.clock.now());
    res.status(201).json({ data: guardrailJson(created) });
  });

  router.delete("/v1/guardrails/:id", async (req, res) => {
    const orgId = orgOf(req, "org:write");
    const id = idOf(req);
    if (!(await deleteGuardrail(deps.db, orgId, id))) throw notFound("guardrail");
    await deps.guardrails.changed(orgId);
    res.json({ data: { id, deleted: true } });
  });

  router.post("/v1/guardrails/:id/assignments", async (req, res) => {
    const orgId = orgOf(req, "org:write");
    const id = idOf(req);
    const input = parseInput(AssignmentBody, req.body ?? {});
    const assigned = await assignGuardrail(deps.db, orgId, id, { subjectType: input.subject_type, subjectId: input.subject_id }, deps.clock.now());
    if (!assigned) throw notFound("guardrail");
    await deps.guardrails.changed(orgId);
    res.status(201).json({ data: { guardrail_id: id, subject_type: input.subject_type, subject_id: input.subject_id } });
  });

  return router;
}

/** Document 1's Guardrail; money as a nanodollar string. */
function guardrailJson(g: StoredGuardrail) {
  return {
    id: g.id,
    name: g.name,
    model_allowlist: g.allowedModels,
    provider_allowlist: g.allowedProviders,
    allowed_data_regions: g.allowedDataRegions,
    budget_nanodollars: g.budgetNanodollars === null ? null : g.budgetNanodollars.toString(),
    budget_reset: g.budgetReset,
    include_byok_spend: g.includeByokInBudgets,
    zdr_flags: g.enforceZdr,
    content_filter_builtins: g.contentFilterBuiltins,
    content_filters: g.contentFilters,
    filter_allowlist: g.filterAllowlist,
    created_at: g.createdAt.toISOString(),
    assignments: g.assignments.map((a) => ({ subject_type: a.subjectType, subject_id: a.subjectId })),
  };
}
