import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import { eventViews, TOPICS } from "@router/proto";
import { closeHolds, type FinishedRequest, type ReleaseDeps, type Spend } from "../holds/settlement";

export const CONSUMER_GROUP = "ledger";

export type CompletedSettlementDeps = ReleaseDeps & { db: Db; log: Logger };

/**
 * Settles finished requests from `router.request.completed.v1`, the gateway's record of each
 * request, which the bus keeps until it is handled: a served request's hold (or its spend lease)
 * is settled with its list cost, an unserved one's released, the request recorded and a run's turn
 * reported, all idempotent by request id (close_holds, lease_spends, recorded_requests, run_turns),
 * so a redelivered event counts once and a gateway that crashed after publishing loses nothing.
 *
 * Events without `served` come from gateways older than this: they settle through CloseHolds.
 */
export function completedSettlementHandler(deps: CompletedSettlementDeps): BatchHandler {
  return async (delivered) => {
    const completed = delivered.map((e) => decoded(e, deps.log)).filter((c): c is Settleable => c !== null);
    if (completed.length === 0) return;
    // Gateways name the hold in the event; only an event of an older gateway needs it looked up.
    const holdIds = await holdsOf(
      deps.db,
      completed.filter((c) => c.spendLeaseHoldId === "" && c.holdId === undefined).map((c) => c.requestId),
    );
    const spends: Spend[] = [];
    const settlements: Parameters<typeof closeHolds>[0]["settlements"] = [];
    const releases: Parameters<typeof closeHolds>[0]["releases"] = [];
    for (const c of completed) {
      const request = finishedRequestOf(c);
      // The ledger's own record of a lost request: its hold was charged when it expired, and stays
      // expired so that a late record from the gateway can still replace the charge with the cost.
      const holdId = c.spendLeaseHoldId === "" && !c.settledByLedger ? (c.holdId ?? holdIds.get(c.requestId) ?? "") : "";
      if (c.served) {
        if (c.spendLeaseHoldId !== "") {
          spends.push({ holdId: c.spendLeaseHoldId, requestId: c.requestId, listCost: c.listCostNanodollars, billedCost: c.billedCostNanodollars });
        }
        settlements.push({ holdId, listCost: c.listCostNanodollars, billedCost: c.billedCostNanodollars, request });
      } else {
        releases.push({ holdId, keep: 0n, request });
      }
    }
    const unknown = await closeHolds({ spends, settlements, releases }, deps);
    // A lease the sweep already removed (it is never deleted today) or a hold of another ledger.
    if (unknown.length > 0) deps.log.warn({ holdIds: unknown }, "ledger.completed.unknown_holds");
  };
}

type Settleable = eventViews.RequestCompletedSettlement & { served: boolean };

/**
 * What the ledger settles of the event (RequestCompletedSettlement: the rest is skipped, not decoded);
 * an undecodable or incomplete one is logged and skipped (retrying cannot mend it).
 */
function decoded(event: IncomingEvent, log: Logger): Settleable | null {
  let c: eventViews.RequestCompletedSettlement;
  try {
    c = eventViews.RequestCompletedSettlement.decode(event.payload);
  } catch (err) {
    log.error({ err, eventId: event.id }, "ledger.completed.undecodable");
    return null;
  }
  if (c.served === undefined) return null;
  if (c.requestId === "" || c.orgId === "") {
    log.error({ eventId: event.id }, "ledger.completed.incomplete");
    return null;
  }
  return c as Settleable;
}

function finishedRequestOf(c: Settleable): FinishedRequest {
  return {
    requestId: c.requestId,
    orgId: c.orgId,
    workspaceId: c.workspaceId,
    agent: c.agent,
    isByok: c.isByok,
    ...(c.runId !== "" && !c.settledByLedger
      ? {
          runTurn: {
            runId: c.runId,
            model: c.servedModel,
            finishReason: c.finishReason,
            toolCalls: c.toolCalls,
            failedToolCalls: c.invalidToolCalls,
            promptTokens: c.usage?.promptTokens ?? 0,
            cachedTokens: c.usage?.cachedTokens ?? 0,
          },
        }
      : {}),
  };
}

/** The holds Admit placed for these requests (a hold's request id is the generation id). */
async function holdsOf(db: Db, requestIds: string[]): Promise<Map<string, string>> {
  if (requestIds.length === 0) return new Map();
  const r = await db.query<{ request_id: string; hold_id: string }>(
    `SELECT request_id, hold_id FROM holds WHERE request_id = ANY ($1::text[]) AND NOT is_lease`,
    [requestIds],
    { prepare: true },
  );
  return new Map(r.rows.map((row) => [row.request_id, row.hold_id]));
}

export function subscribeCompletedSettlement(bus: EventBus, deps: CompletedSettlementDeps): Promise<Subscription> {
  const handleBatch = completedSettlementHandler(deps);
  return bus.subscribe({
    topic: TOPICS.requestCompleted,
    group: CONSUMER_GROUP,
    handler: (event) => handleBatch([event]),
    batchHandler: handleBatch,
  });
}
