import express, { Router, type Request } from "express";
import { z } from "zod";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { ledger } from "@router/management-api";
import { identityOf, parseInput } from "@router/http-kit";
import { fromUsd, toUsd } from "@router/money";
import { purchaseFee, type CreditPolicy } from "./credit-policy";
import { balanceOf, PURCHASE_ID, purchaseOf, purchasesOf } from "./credit-store";
import { balanceView, documentView, purchaseView } from "./credit-views";
import type { StripeProcessor } from "./payment-processor";

export interface CreditRoutesDeps {
  db: Db;
  policy: CreditPolicy;
  processor: StripeProcessor;
  /** Where hosted checkout sends the customer after paying; unset, the processor's own page. */
  checkoutReturnUrl?: string;
}

/** The checkout route reads its own body, after the 409 of a deployment where credits cannot be bought (`ownBodyPaths`). */
export const CHECKOUT_PATH = "/v1/credits/checkout";


const purchasesQuery = ledger.purchasesQuery;

const CHECKOUT_BODY_LIMIT = "16kb";
/** The largest purchase checkout takes, USD (ours: a larger one is an agreement, not a card payment). */
const MAX_PURCHASE_USD = 100_000;

/** `{"amount": 25}`: USD in whole cents (the processor's unit), from the minimum purchase up to the maximum. */
function checkoutBody(policy: CreditPolicy) {
  const least = toUsd(policy.minPurchase);
  return z.strictObject({
    amount: z
      .number({ error: "expected a USD amount (a number)" })
      .min(least, `must be at least the minimum purchase, ${least} USD`)
      .max(MAX_PURCHASE_USD, `must be at most ${MAX_PURCHASE_USD} USD`)
      .refine((usd) => Number.isInteger(Math.round(usd * 100)) && Math.abs(usd * 100 - Math.round(usd * 100)) < 1e-6, "must be whole cents"),
  });
}

function jsonBody(text: unknown): unknown {
  if (typeof text !== "string" || text.trim() === "") throw invalid("body", "expected a JSON object with amount");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid("body", "expected a JSON object with amount");
  }
}

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
  router.post(
    CHECKOUT_PATH,
    (req, _res, next) => {
      const identity = identityOf(req);
      requirePermission(identity, "billing:write");
      if (!deps.policy.purchasable) {
        throw new DomainError(
          "conflict",
          "credits cannot be bought: this deployment charges no fee (or takes no payments), so a purchased balance could pay for nothing",
          { details: { purchasable: false } },
        );
      }
      next();
    },
    express.text({ type: () => true, limit: CHECKOUT_BODY_LIMIT }),
    async (req, res) => {
      const identity = identityOf(req);
      const { amount } = parseInput(checkoutBody(deps.policy), jsonBody(req.body));
      const gross = fromUsd(amount);
      const fee = purchaseFee(deps.policy, gross);
      const session = await deps.processor.startCheckout({ orgId: identity.orgId, gross, fee, returnUrl: deps.checkoutReturnUrl });
      res.status(201).json({ data: { url: session.url, id: session.id, fee: toUsd(fee) } });
    },
  );

  return router;
}
