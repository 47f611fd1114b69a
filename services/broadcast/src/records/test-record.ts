import { randomBytes } from "node:crypto";
import type { Identity } from "@router/http-kit";
import { events } from "@router/proto";

/**
 * The synthetic request the test operation sends: plainly made up (model `router/test`, provider
 * `router`, no tokens, no cost), from the caller's organisation, key and workspace, created now.
 * The body built from it carries `test: true` (webhook) or `router.test` (span).
 */
export function testEvent(identity: Identity, now: Date): events.RequestCompleted {
  return events.RequestCompleted.fromPartial({
    requestId: `gen-test-${randomBytes(12).toString("hex")}`,
    orgId: identity.orgId,
    keyName: identity.keyName ?? "",
    workspaceId: identity.workspaceId ?? "",
    createdAtMs: BigInt(now.getTime()),
    requestedModel: "router/test",
    servedModel: "router/test",
    providerSlug: "router",
    status: "complete",
    finishReason: "stop",
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 },
  });
}
