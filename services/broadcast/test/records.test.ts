import { webhookBody } from "../src/records/request-record";
import { otlpTraceBody, traceIdOf } from "../src/records/request-span";
import { isSampled } from "../src/records/sampling";
import { requestId, servedRequest } from "./broadcast-fixtures";

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: { stringValue?: string }[] } };
}

/** The one span of an OTLP/HTTP JSON export request, and its resource and scope. */
function onlySpan(body: string) {
  const parsed = JSON.parse(body) as {
    resourceSpans: {
      resource: { attributes: OtlpAttribute[] };
      scopeSpans: {
        scope: { name: string };
        spans: {
          traceId: string;
          spanId: string;
          name: string;
          kind: number;
          startTimeUnixNano: string;
          endTimeUnixNano: string;
          attributes: OtlpAttribute[];
          status: { code: number; message?: string };
        }[];
      }[];
    }[];
  };
  expect(parsed.resourceSpans).toHaveLength(1);
  const resource = parsed.resourceSpans[0]!;
  expect(resource.scopeSpans).toHaveLength(1);
  const scope = resource.scopeSpans[0]!;
  expect(scope.spans).toHaveLength(1);
  return { resource, scope, span: scope.spans[0]! };
}

/** OTLP attribute list to plain values (int64 arrives as a string or a number). */
function attributesOf(list: OtlpAttribute[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.arrayValue
        ? value.arrayValue.values.map((v) => v.stringValue)
        : value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue ?? value.boolValue),
    ]),
  );
}

describe("the webhook record", () => {
  it("holds the request's metadata under `request`, in USD and milliseconds", () => {
    const e = servedRequest("org_a");
    const body = JSON.parse(webhookBody(e, { test: false })) as Record<string, unknown>;

    expect(body).toEqual({
      type: "request.completed",
      test: false,
      request: {
        id: e.requestId,
        created_at: "2026-11-21T09:00:00.000Z",
        requested_model: "openai/gpt-4o-mini",
        model: "openai/gpt-4o-mini",
        provider: "openai",
        status: "complete",
        finish_reason: "stop",
        error_code: null,
        streamed: false,
        cancelled: false,
        is_byok: true,
        tokens: { prompt: 1200, completion: 300, total: 1500, cached: 100, reasoning: 0 },
        cost: { total_usd: 0, list_usd: 0.0045 },
        timing: { duration_ms: 606, ttft_ms: 120, generation_ms: 480, routing_overhead_ms: 6 },
        key_name: "ci key",
        client: "Acme Corp",
        workspace_id: "ws_acme",
        agent: "planner",
        session_id: "sess-42",
        run_id: "run_7",
      },
    });
  });

  it("leaves out what is not metadata of the request: referer, user agent, app, key hash, attempts", () => {
    const text = webhookBody(servedRequest("org_a"), { test: false });
    for (const leaked of ["console.example.com", "openai-node", "Console", "c".repeat(64), "att_"]) {
      expect(text).not.toContain(leaked);
    }
  });

  it("gives unknowns as null for a refused request", () => {
    const refused = servedRequest("org_a", {
      servedModel: "",
      providerSlug: "",
      status: "refused",
      finishReason: "",
      errorCode: "budget_exceeded",
      ttftMs: undefined,
      generationMs: undefined,
      routingOverheadMs: undefined,
      attempts: [],
      usage: undefined,
      workspaceName: "",
      agent: "",
    });
    const { request } = JSON.parse(webhookBody(refused, { test: true })) as { request: Record<string, unknown> };
    expect(request).toMatchObject({
      model: null,
      provider: null,
      status: "refused",
      error_code: "budget_exceeded",
      client: null,
      agent: null,
      tokens: { prompt: 0, completion: 0, total: 0, cached: 0, reasoning: 0 },
      timing: { duration_ms: null, ttft_ms: null, generation_ms: null, routing_overhead_ms: null },
    });
  });
});

describe("the OTLP span", () => {
  it("is one client span with gen_ai attributes, timed from the request's arrival to its end", () => {
    const e = servedRequest("org_a");
    const { resource, scope, span } = onlySpan(otlpTraceBody(e, { test: false }));

    expect(attributesOf(resource.resource.attributes)).toMatchObject({ "service.name": "router" });
    expect(scope.scope.name).toBe("router.broadcast");
    expect(span.name).toBe("chat openai/gpt-4o-mini");
    expect(span.kind).toBe(3); // SPAN_KIND_CLIENT in OTLP numbering
    expect(span.traceId).toBe(traceIdOf(e.requestId));
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    const start = BigInt(Date.parse("2026-11-21T09:00:00.000Z")) * 1_000_000n;
    expect(BigInt(span.startTimeUnixNano)).toBe(start);
    // 6 ms of routing overhead plus 600 ms inside the provider.
    expect(BigInt(span.endTimeUnixNano) - start).toBe(606_000_000n);
    expect(span.status.code).toBe(0);
    expect(attributesOf(span.attributes)).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "openai",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "openai/gpt-4o-mini",
      "gen_ai.response.model": "openai/gpt-4o-mini",
      "gen_ai.response.id": e.requestId,
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 1200,
      "gen_ai.usage.output_tokens": 300,
      "gen_ai.conversation.id": "sess-42",
      "gen_ai.agent.name": "planner",
      "router.request.id": e.requestId,
      "router.status": "complete",
      "router.streamed": false,
      "router.byok": true,
      "router.cost.total_usd": 0,
      "router.cost.list_usd": 0.0045,
      "router.usage.cached_tokens": 100,
      "router.usage.reasoning_tokens": 0,
      "router.ttft_ms": 120,
      "router.generation_ms": 480,
      "router.routing_overhead_ms": 6,
      "router.key.name": "ci key",
      "router.workspace.id": "ws_acme",
      "router.workspace.name": "Acme Corp",
      "router.agent": "planner",
      "router.session.id": "sess-42",
      "router.run.id": "run_7",
    });
  });

  it("marks a failed request as an error span with its code as error.type", () => {
    const failed = servedRequest("org_a", { status: "error", errorCode: "rate_limit_exceeded", finishReason: "error" });
    const { span } = onlySpan(otlpTraceBody(failed, { test: true }));
    expect(span.status).toEqual({ code: 2, message: "rate_limit_exceeded" });
    expect(attributesOf(span.attributes)).toMatchObject({ "error.type": "rate_limit_exceeded", "router.test": true });
  });
});

describe("sampling", () => {
  const ids = Array.from({ length: 4000 }, () => requestId());

  it("sends everything at 1 and nothing at 0", () => {
    expect(ids.every((id) => isSampled(id, 1))).toBe(true);
    expect(ids.some((id) => isSampled(id, 0))).toBe(false);
  });

  it("sends about the rate's fraction, the same requests every time, nested between rates", () => {
    const quarter = ids.filter((id) => isSampled(id, 0.25));
    const half = ids.filter((id) => isSampled(id, 0.5));
    expect(quarter.length / ids.length).toBeGreaterThan(0.21);
    expect(quarter.length / ids.length).toBeLessThan(0.29);
    expect(half.length / ids.length).toBeGreaterThan(0.45);
    expect(half.length / ids.length).toBeLessThan(0.55);
    expect(ids.filter((id) => isSampled(id, 0.25))).toEqual(quarter);
    expect(quarter.every((id) => half.includes(id))).toBe(true);
  });
});
