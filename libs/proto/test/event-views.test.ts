import { events, eventViews } from "@router/proto";
import { eventMessages, type FieldDescriptor } from "./asyncapi-document";

/** A RequestCompleted with every field set to something other than its default. */
function everyFieldSet(): events.RequestCompleted {
  return events.RequestCompleted.fromPartial({
    requestId: "gen-1764400000-views",
    orgId: "org_views",
    keyHash: "ab".repeat(32),
    keyName: "key ünïcode ✓",
    workspaceId: "ws_views",
    createdAtMs: 1_764_400_000_123n,
    requestedModel: "openai/gpt-4o-mini",
    servedModel: "openai/gpt-4o-mini-2024",
    providerSlug: "openai",
    endpointId: "openai/gpt-4o-mini",
    status: "complete",
    finishReason: "stop",
    nativeFinishReason: "end_turn",
    isByok: true,
    isCacheHit: true,
    cancelled: true,
    streamed: true,
    quantization: "fp8",
    ttftMs: 11,
    generationMs: 22,
    routingOverheadMs: 3,
    errorCode: "upstream_error",
    errorMessage: "an error",
    billedCostNanodollars: 9_876n,
    listCostNanodollars: 9_007_199_254_740_993n,
    appId: "app",
    appTitle: "App",
    httpReferer: "https://example.com",
    userAgent: "agent/1",
    agent: "planner",
    sessionId: "sess",
    usage: { promptTokens: 1, completionTokens: 2, cachedTokens: 3, reasoningTokens: 4, cacheWrite5mTokens: 5, cacheWrite1hTokens: 6 },
    usageLines: [{ kind: "prompt", tokens: 1, pricePerMillionNanodollars: 2n, costNanodollars: 3n, priceVersionId: 4n }],
    attempts: [{ id: "att", attempt: 1, modelId: "m", providerSlug: "openai", endpointId: "e", isByok: true, status: "ok", httpStatus: 200, durationMs: 5, ttftMs: 4, startedAtMs: 7n, circuitOpen: true }],
    priceVersionIds: [4n, 5n],
    appHidden: true,
    appCategories: ["coding"],
    runId: "run",
    keyClass: "standard",
    workspaceName: "Workspace",
    stickyPin: "pin",
    toolCalls: 2,
    invalidToolCalls: 1,
    contentFilterLabels: ["email"],
    ingress: "responses",
    served: true,
    spendLeaseHoldId: "lease",
    settledByLedger: true,
    droppedTools: ["web_search"],
    providerName: "OpenAI",
    holdId: "hold",
  });
}

const VIEWS = {
  RequestCompletedRef: eventViews.RequestCompletedRef,
  RequestCompletedSpend: eventViews.RequestCompletedSpend,
  RequestCompletedRollup: eventViews.RequestCompletedRollup,
  RequestCompletedSettlement: eventViews.RequestCompletedSettlement,
  RequestCompletedHealth: eventViews.RequestCompletedHealth,
} as const;

describe("readings of RequestCompleted (router.events.views.v1)", () => {
  const full = eventMessages().find((m) => m.name === "RequestCompleted");
  const views = eventMessages("router/events/views/v1", "router.events.views.v1");

  it("has every view this test decodes, and nothing else", () => {
    expect(views.map((v) => v.name).sort()).toEqual(Object.keys(VIEWS).sort());
  });

  it("gives each field the number, type and label it has in RequestCompleted", () => {
    const byName = new Map((full?.fields ?? []).map((f) => [f.name, f]));
    expect(byName.size).toBeGreaterThan(40);
    for (const view of views) {
      for (const f of view.fields) {
        const original = byName.get(f.name);
        expect({ view: view.name, field: f.name, found: original !== undefined }).toEqual({ view: view.name, field: f.name, found: true });
        const shape = (x: FieldDescriptor) => ({ number: x.number, label: x.label, type: x.type, typeName: x.typeName, optional: x.proto3Optional ?? false });
        expect({ view: view.name, field: f.name, ...shape(f) }).toEqual({ view: view.name, field: f.name, ...shape(original!) });
      }
    }
  });

  it("reads from a RequestCompleted payload the values the whole decoding gives", () => {
    const payload = events.RequestCompleted.encode(everyFieldSet()).finish();
    const whole = events.RequestCompleted.decode(payload) as unknown as Record<string, unknown>;
    for (const [name, codec] of Object.entries(VIEWS)) {
      const read = codec.decode(payload) as unknown as Record<string, unknown>;
      const keys = Object.keys(read);
      expect(keys.length).toBeGreaterThan(1);
      for (const key of keys) expect({ view: name, key, value: read[key] }).toEqual({ view: name, key, value: whole[key] });
    }
  });
});
