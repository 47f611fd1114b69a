import { Router, type Request } from "express";
import { z } from "zod";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import type { CreditPolicy } from "./credit-policy";
import { balanceOf, PURCHASE_ID, purchaseOf, purchasesOf } from "./credit-store";
import { balanceView, documentView, purchaseView } from "./credit-views";
import type { StripeProcessor } from "./payment-processor";

export interface CreditRoutesDeps {
  db: Db;
  policy: CreditPolicy;
  processor: StripeProcessor;
}

/** The checkout route reads its own body (none, while credits cannot be bought): see `CREDIT_OWN_BODY_PATHS`. */
export const CHECKOUT_PATH = "/v1/credits/checkout";

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

const purchasesQuery = z.looseObject({
  limit: z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(1, "must be at least 1").max(MAX_PAGE, `must be at most ${MAX_PAGE}`))
    .default(DEFAULT_PAGE),
  // The last purchase of the previous page, handed out as `next_cursor`.
  cursor: z.string().regex(PURCHASE_ID, "not a cursor this list returned").optional(),
});

function purchaseIdParam(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!PURCHASE_ID.test(id)) throw invalid("id", "expected a purchase id (pur_...)");
  return id;
}

/**
 * `GET /v1/credits` (the balance), `GET /v1/credits/purchases`, `GET /v1/credits/purchases/{id}/document`
 * (billing:read) and `POST /v1/credits/checkout` (billing:write), behind the gateway-signed identity.
 */
export function creditRoutes(deps: CreditRoutesDeps): Router {
  const router = Router();

  router.get("/v1/credits", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "billing:read");
    res.json({ data: balanceView(await balanceOf(deps.db, identity.orgId)) });
  });

  router.get("/v1/credits/purchases", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "billing:read");
    const query = parseInput(purchasesQuery, req.query);
    // One more than the page tells whether another page follows.
    const rows = await purchasesOf(deps.db, identity.orgId, query.limit + 1, query.cursor);
    if (!rows) throw invalid("cursor", "not a cursor this list returned");
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    res.json({ data: page.map(purchaseView), next_cursor: rows.length > query.limit && last ? last.id : null });
  });

  router.get("/v1/credits/purchases/:id/document", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "billing:read");
    const purchase = await purchaseOf(deps.db, identity.orgId, purchaseIdParam(req));
    if (!purchase) throw notFound("purchase");
    if (purchase.status !== "paid") throw new DomainError("not_found", `the purchase is ${purchase.status}: it has no invoice or receipt`);
    const document = await deps.processor.document(purchase.sessionId);
    if (!document) throw new DomainError("not_found", "the payment processor has no invoice or receipt for this purchase");
    res.json({ data: documentView(document) });
  });

  // Decided before the body is read: while credits cannot be spent, any body gets the same 409.
  router.post(CHECKOUT_PATH, (req, _res) => {
    const identity = identityOf(req);
    requirePermission(identity, "billing:write");
    if (!deps.policy.purchasable) {
      throw new DomainError("conflict", "credits cannot be bought: every model is BYOK-only, so a purchased balance could pay for nothing", {
        details: { purchasable: false },
      });
    }
    // Checkout sessions are made only once credits can be spent (docs/decisions.md, "Credits").
    throw new DomainError("unavailable", "checkout is not offered by this release");
  });

  return router;
}
