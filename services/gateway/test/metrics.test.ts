import { metricSample } from "@router/testkit";
import { GatewayMetrics } from "../src/metrics";
import { startChatHarness, userMessage, type ChatHarness } from "./chat/chat-harness";
import { call, newOrganisation, startHarness, type Harness } from "./harness";

const DECLARED = [
  "gateway_http_requests_total",
  "gateway_chat_requests_total",
  "gateway_overhead_seconds",
  "gateway_upstream_latency_seconds",
  "gateway_upstream_attempts_total",
  "gateway_time_to_first_token_seconds",
  "gateway_circuit_open",
  "gateway_circuit_open_dispatches_total",
  "gateway_auth_cache_hits_total",
  "gateway_auth_cache_misses_total",
  "gateway_auth_cache_refreshes_total",
  "gateway_ledger_closings_pending",
  "gateway_rate_limit_refusals_total",
];

describe("the gateway's metrics listener", () => {
  let h: Harness;
  let admin: string;
  beforeAll(async () => {
    h = await startHarness("gwmetrics", { metricsPort: 0 });
    admin = `http://127.0.0.1:${h.gateway.metricsPort}`;
  });
  afterAll(() => h.close());

  const scrape = async () => (await fetch(`${admin}/metrics`)).text();

  it("serves every declared series in the Prometheus text format on the admin port", async () => {
    const res = await fetch(`${admin}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of DECLARED) expect(text).toContain(`# TYPE ${name} `);
    expect(text).toContain('nodejs_heap_size_used_bytes{service="gateway"}');
  });

  it("reports the settlements waiting for the ledger (none when it keeps up)", async () => {
    expect(await scrape()).toMatch(/^gateway_ledger_closings_pending\{service="gateway"\} 0$/m);
  });

  it("does not serve metrics on the public port", async () => {
    expect((await call(h.url, "GET", "/metrics")).status).toBe(404);
  });

  it("counts answered requests by route pattern, method and status, never by path", async () => {
    await call(h.url, "GET", "/health");
    await call(h.url, "GET", "/no/such/thing");
    const text = await scrape();
    expect(metricSample(text, "gateway_http_requests_total", { route: "/health", method: "GET", status: "200", service: "gateway" })).toBeGreaterThanOrEqual(1);
    expect(metricSample(text, "gateway_http_requests_total", { route: "unmatched", method: "GET", status: "404" })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain("/no/such/thing");
  });

  it("reports auth cache hits and misses from the cache's own counters", async () => {
    const org = await newOrganisation(h);
    const before = await scrape();
    await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    const after = await scrape();
    expect(metricSample(after, "gateway_auth_cache_misses_total") - metricSample(before, "gateway_auth_cache_misses_total")).toBe(1);
    expect(metricSample(after, "gateway_auth_cache_hits_total") - metricSample(before, "gateway_auth_cache_hits_total")).toBe(1);
  });
});

describe("chat metrics", () => {
  let h: ChatHarness;
  let metrics: GatewayMetrics;
  beforeAll(async () => {
    metrics = new GatewayMetrics({ defaultMetrics: false });
    h = await startChatHarness({
      metrics,
      dispatcher: {
        onCircuitChange: metrics.circuitChanged,
        breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 },
      },
    });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    for (const f of Object.values(h.fakes)) f.reset();
  });

  const scrape = () => metrics.registry.metrics();
  const moved = async (act: () => Promise<unknown>, name: string, labels: Record<string, string> = {}) => {
    const before = metricSample(await scrape(), name, labels);
    await act();
    return metricSample(await scrape(), name, labels) - before;
  };

  it("counts a completion with its overhead, its attempt and the provider's latency", async () => {
    h.fakes.openai.script({ text: "Hi" });
    const before = await scrape();
    const res = await h.post({ model: "test/gpt", messages: userMessage() });
    const after = await scrape();

    expect(res.status).toBe(200);
    const delta = (name: string, labels: Record<string, string> = {}) => metricSample(after, name, labels) - metricSample(before, name, labels);
    expect(delta("gateway_chat_requests_total", { outcome: "complete" })).toBe(1);
    expect(delta("gateway_overhead_seconds_count")).toBe(1);
    expect(delta("gateway_upstream_attempts_total", { provider: "openai", status: "200" })).toBe(1);
    expect(delta("gateway_upstream_latency_seconds_count", { provider: "openai", outcome: "ok" })).toBe(1);
    expect(delta("gateway_time_to_first_token_seconds_count")).toBe(0);
    expect(after).not.toContain(h.orgId);
    expect(after).not.toContain("test/gpt");
  });

  it("observes the time to first token of a stream", async () => {
    h.fakes.openai.script({ chunks: ["Hello ", "world"] });
    expect(await moved(() => h.stream({ model: "test/gpt", stream: true, messages: userMessage() }), "gateway_time_to_first_token_seconds_count")).toBe(1);
  });

  it("counts a failed attempt by provider and status before the failover that served", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 503 } });
    h.fakes.openai.script({ text: "from openai" });
    expect(
      await moved(() => h.post({ model: "test/multi", messages: userMessage() }), "gateway_upstream_latency_seconds_count", {
        provider: "groq",
        outcome: "error",
      }),
    ).toBe(1);
    expect(metricSample(await scrape(), "gateway_upstream_attempts_total", { provider: "groq", status: "503" })).toBe(1);
  });

  it("counts a request routing refused as refused, without overhead", async () => {
    const before = await scrape();
    const res = await h.post({ model: "test/nothing-by-this-name", messages: userMessage() });
    const after = await scrape();
    expect(res.status).toBe(404);
    expect(metricSample(after, "gateway_chat_requests_total", { outcome: "refused" }) - metricSample(before, "gateway_chat_requests_total", { outcome: "refused" })).toBe(1);
    expect(metricSample(after, "gateway_overhead_seconds_count")).toBe(metricSample(before, "gateway_overhead_seconds_count"));
  });

  it("shows an endpoint's circuit as open once its breaker opened", async () => {
    h.fakes.groq.setDefault({ failure: { kind: "status", status: 500 } });
    for (let i = 0; i < 2; i++) await h.post({ model: "test/multi", messages: userMessage() });
    expect(metricSample(await scrape(), "gateway_circuit_open", { endpoint: "ep_groq_multi" })).toBe(1);
  });
});

describe("gateway_ledger_closings_pending", () => {
  it("reads the queue's size at scrape time", async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    let pending = 7;
    metrics.watchClosings(() => pending);
    expect(metricSample(await metrics.registry.metrics(), "gateway_ledger_closings_pending")).toBe(7);
    pending = 0;
    expect(metricSample(await metrics.registry.metrics(), "gateway_ledger_closings_pending")).toBe(0);
  });
});
