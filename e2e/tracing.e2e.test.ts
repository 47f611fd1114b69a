import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
}

/** An OTLP/HTTP JSON receiver on loopback that keeps every span with the service that sent it. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        const parsed = JSON.parse(body) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
            scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string }> }>;
          }>;
        };
        for (const rs of parsed.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue ?? "";
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? "", name: s.name });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Traces across the services, as separate processes on the Redis bus: one chat completion is one
 * trace from the gateway's HTTP span through routing's and the ledger's gRPC spans to the activity
 * consumer's write, exported over OTLP/HTTP as the standard OTEL_* settings say.
 */
describe("tracing across the services", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    receiver = await startOtlpReceiver();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
    });
    const mgmt = gatewayClient(stack.gatewayUrl, (await stack.createOrg("Acme")).managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-acme-0001" })).status).toBe(201);
    const key = (await mgmt.post("/v1/keys", { name: "traced", limit: 10, limit_reset: "monthly", limit_mode: "soft", include_byok_in_limit: true })).json.data.key as string;
    const res = await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", {
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "trace me" }],
    });
    expect(res.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
    await receiver?.close();
  });

  it("follows one chat completion from the HTTP request to the activity write in one trace", async () => {
    const trace = await waitFor(
      () => {
        const http = receiver.spans.find((s) => s.service === "router-gateway" && s.name === "POST /v1/chat");
        if (!http) return undefined;
        const inTrace = receiver.spans.filter((s) => s.traceId === http.traceId);
        // Each service exports in its own batches: wait until every span's parent has arrived too.
        const ids = new Set(inTrace.map((s) => s.spanId));
        const whole = inTrace.every((s) => s === http || ids.has(s.parentSpanId));
        return whole && inTrace.some((s) => s.name === "activity.record") ? { http, inTrace } : undefined;
      },
      { timeoutMs: 20_000, what: "the trace reaching activity" },
    );
    const services = new Set(trace.inTrace.map((s) => s.service));
    // Every consumer of the event joins the trace too (reports, broadcast...); these four at least.
    expect([...services]).toEqual(expect.arrayContaining(["router-activity", "router-gateway", "router-ledger", "router-routing"]));
    const byId = new Map(trace.inTrace.map((s) => [s.spanId, s]));
    // Every span but the HTTP one has its parent in the same trace: one tree, no orphans.
    for (const s of trace.inTrace) {
      if (s === trace.http) expect(s.parentSpanId).toBe("");
      else expect(byId.has(s.parentSpanId)).toBe(true);
    }
    const write = trace.inTrace.find((s) => s.name === "activity.record");
    expect(byId.get(write?.parentSpanId ?? "")?.name).toBe("process router.request.completed.v1");
  }, 30_000);
});
