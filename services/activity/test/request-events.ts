import { randomBytes } from "node:crypto";
import { signIdentity, type Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { events } from "@router/proto";

type Overrides = Partial<events.RequestCompleted>;

export function generationId(): string {
  return `gen-${randomBytes(9).toString("base64url")}`;
}

/** A served, BYOK request-completed event; tests override what they are about. */
export function completedEvent(overrides: Overrides = {}): events.RequestCompleted {
  const id = overrides.requestId ?? generationId();
  return events.RequestCompleted.fromPartial({
    requestId: id,
    orgId: "org_alpha",
    keyHash: "a".repeat(64),
    keyName: "ci key",
    keyClass: "inference",
    workspaceId: "ws_client1",
    workspaceName: "Client One",
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
    listCostNanodollars: 2_250n,
    appId: "app_console",
    appTitle: "Console",
    httpReferer: "https://console.example.com",
    userAgent: "openai-node/6.0",
    agent: "planner",
    sessionId: "sess-1",
    runId: "run_abc",
    usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 0, reasoningTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 },
    usageLines: [
      { kind: "prompt", tokens: 10, pricePerMillionNanodollars: 150_000_000n, costNanodollars: 1_500n, priceVersionId: 7n },
      { kind: "completion", tokens: 5, pricePerMillionNanodollars: 600_000_000n, costNanodollars: 3_000n, priceVersionId: 7n },
    ],
    priceVersionIds: [7n],
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
        durationMs: 470,
        ttftMs: 115,
        startedAtMs: BigInt(Date.parse("2026-11-21T09:00:00.005Z")),
      },
    ],
    ...overrides,
  });
}

/** A request the hard key ceiling refused before anything was routed. */
export function refusedEvent(overrides: Overrides = {}): events.RequestCompleted {
  return completedEvent({
    servedModel: "",
    providerSlug: "",
    endpointId: "",
    status: "refused",
    finishReason: "",
    nativeFinishReason: "",
    ttftMs: undefined,
    generationMs: undefined,
    routingOverheadMs: undefined,
    errorCode: "budget_exceeded",
    errorMessage: "the key's daily ceiling of 5 USD is reached",
    listCostNanodollars: 0n,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 },
    usageLines: [],
    priceVersionIds: [],
    attempts: [],
    ...overrides,
  });
}

export function encodeEvent(e: events.RequestCompleted): Uint8Array {
  return events.RequestCompleted.encode(e).finish();
}

export const TEST_IDENTITY = newIdentityKeys();

export async function identityHeader(
  orgId: string,
  credential: Identity["credential"] = "management",
  more: Partial<Identity> = {},
): Promise<Record<string, string>> {
  const identity: Identity = {
    orgId,
    credential,
    keyHash: "b".repeat(64),
    keyName: "test",
    workspaceId: null,
    role: "owner",
    userId: null,
    operator: false,
    ...more,
  };
  return { "x-router-identity": await signIdentity(identity, TEST_IDENTITY.signingKey) };
}
