import type { EventBus } from "@router/bus";
import type { Logger } from "@router/logging";
import { events, TOPICS } from "@router/proto";
import type { LostRequest } from "../holds/settlement";

export const GATEWAY_LOST = "router.gateway_lost";

/**
 * Publishes the record of each request whose gateway went away mid-request, as the gateway would
 * have: failed, `error_code` `router.gateway_lost`, charged its worst case. Activity shows it like
 * any request; the ledger's own consumer records it (its hold is settled already). Same event id as
 * the gateway's would have been (the request id), so a late record from the gateway counts once.
 */
export function lostRequestPublisher(bus: EventBus, log: Logger): (requests: LostRequest[], at: Date) => Promise<void> {
  return async (requests) => {
    await Promise.all(
      requests.map((r) =>
        bus
          .publish({
            topic: TOPICS.requestCompleted,
            key: r.orgId,
            type: TOPICS.requestCompleted,
            id: r.requestId,
            payload: events.RequestCompleted.encode(
              events.RequestCompleted.fromPartial({
                requestId: r.requestId,
                orgId: r.orgId,
                // Named by its key's ceiling, when one counted it.
                keyHash: r.keyHash,
                keyName: r.keyName,
                workspaceId: r.workspaceId,
                agent: r.agent,
                createdAtMs: BigInt(r.createdAt.getTime()),
                status: "error",
                finishReason: "error",
                errorCode: GATEWAY_LOST,
                errorMessage: "the gateway serving this request stopped before it finished; charged at its worst case",
                isByok: r.isByok,
                listCostNanodollars: r.charged,
                served: true,
                settledByLedger: true,
              }),
            ).finish(),
          })
          .catch((err: unknown) => log.error({ err, requestId: r.requestId }, "ledger.lost_request.publish_failed")),
      ),
    );
    const charged = requests.reduce((sum, r) => sum + r.charged, 0n);
    log.warn({ requests: requests.length, chargedNanodollars: charged.toString() }, "ledger.holds.gateway_lost");
  };
}
