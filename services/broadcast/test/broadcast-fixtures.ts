import { randomBytes } from "node:crypto";
import type { Role } from "@router/access";
import { signIdentity, type Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { events } from "@router/proto";

export const TEST_IDENTITY = newIdentityKeys();
export const TEST_MASTER_KEY = "broadcast-test-master-key";

/** A fresh generation id, as the gateway makes them. */
export function requestId(): string {
  return `gen-${randomBytes(12).toString("hex")}`;
}

/**
 * A served request of organisation `orgId` as the gateway publishes it: 1200 prompt and 300
 * completion tokens at 0.0045 USD list price, through the key "ci key" of workspace "Acme Corp",
 * agent "planner", session "sess-42", run "run_7".
 */
export function servedRequest(orgId: string, overrides: Partial<events.RequestCompleted> = {}): events.RequestCompleted {
  return events.RequestCompleted.fromPartial({
    requestId: requestId(),
    orgId,
    keyHash: "c".repeat(64),
    keyName: "ci key",
    keyClass: "inference",
    workspaceId: "ws_acme",
    workspaceName: "Acme Corp",
    createdAtMs: BigInt(Date.parse("2026-11-21T09:00:00.000Z")),
    requestedModel: "openai/gpt-4o-mini",
    servedModel: "openai/gpt-4o-mini",
    providerSlug: "openai",
    endpointId: "ep_openai_gpt4omini",
    status: "complete",
    finishReason: "stop",
    nativeFinishReason: "stop",
    isByok: true,
    streamed: false,
    ttftMs: 120,
    generationMs: 480,
    routingOverheadMs: 6,
    billedCostNanodollars: 0n,
    listCostNanodollars: 4_500_000n,
    appTitle: "Console",
    httpReferer: "https://console.example.com",
    userAgent: "openai-node/6.0",
    agent: "planner",
    sessionId: "sess-42",
    runId: "run_7",
    usage: { promptTokens: 1200, completionTokens: 300, cachedTokens: 100, reasoningTokens: 0 },
    attempts: [
      {
        id: `att_${randomBytes(8).toString("hex")}`,
        attempt: 1,
        modelId: "openai/gpt-4o-mini",
        providerSlug: "openai",
        endpointId: "ep_openai_gpt4omini",
        isByok: true,
        status: "ok",
        httpStatus: 200,
        durationMs: 600,
        ttftMs: 115,
        startedAtMs: BigInt(Date.parse("2026-11-21T09:00:00.006Z")),
      },
    ],
    ...overrides,
  });
}

/** The signed identity header the gateway would forward for a caller of `orgId`. */
export async function identityHeaders(
  orgId: string,
  opts: { role?: Role; credential?: Identity["credential"] } = {},
): Promise<Record<string, string>> {
  const identity: Identity = {
    orgId,
    credential: opts.credential ?? "management",
    keyHash: "b".repeat(64),
    keyName: "admin key",
    workspaceId: null,
    role: opts.role ?? "owner",
    userId: null,
    operator: false,
  };
  return { "x-router-identity": await signIdentity(identity, TEST_IDENTITY.signingKey), "content-type": "application/json" };
}
