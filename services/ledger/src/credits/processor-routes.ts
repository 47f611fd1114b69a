import express, { Router } from "express";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { CreditPolicy } from "./credit-policy";
import { feeScheduleView } from "./credit-views";
import { StripeProcessor } from "./payment-processor";
import { applyProcessorEvent } from "./processor-events";

export interface ProcessorRoutesDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  policy: CreditPolicy;
  processor: StripeProcessor;
}

/** The event receiver verifies the signature over the exact bytes, so it reads its own body. */
export const PROCESSOR_EVENTS_PATH = "/v1/billing/webhook";
/** Events are small; anything larger is no event of the processor's. */
const EVENT_BODY_LIMIT = "512kb";

/**
 * The routes the gateway forwards without a caller: `GET /v1/credits/fees` (public) and
 * `POST /v1/billing/webhook` (the payment processor, authenticated by its own signature).
 */
export function processorRoutes(deps: ProcessorRoutesDeps): Router {
  const router = Router();

  router.get("/v1/credits/fees", (_req, res) => {
    res.json({ data: feeScheduleView(deps.policy, deps.processor.configured) });
  });

  router.post(PROCESSOR_EVENTS_PATH, express.raw({ type: () => true, limit: EVENT_BODY_LIMIT }), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const event = deps.processor.verifyEvent(body, req.header(StripeProcessor.SIGNATURE_HEADER), deps.clock.now().getTime());
    await applyProcessorEvent(event, deps.processor.provider, deps);
    res.json({ data: { received: true } });
  });

  return router;
}
