import { SIGNATURE_HEADER, verifySignature } from "@router/outbound";
import {
  gatewayClient,
  startFakeOpenAi,
  startHttpsReceiver,
  startStack,
  waitFor,
  type FakeUpstream,
  type HttpsReceiver,
  type ReceivedRequest,
  type Stack,
} from "@router/testkit";

interface OtlpSpan {
  name: string;
  traceId: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/**
 * Broadcast end to end: a chat completion through the gateway reaches the broadcast service over
 * the Redis Streams bus (separate processes), which delivers a signed webhook record and an OTLP
 * span to real HTTPS receivers on loopback (allowed, and their certificate trusted, only through
 * the test-only outbound settings). A receiver answering 500 is retried and recorded.
 */
describe("broadcast through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let receiver: HttpsReceiver;
  let mgmt: ReturnType<typeof gatewayClient>;
  let inference: ReturnType<typeof gatewayClient>;

  beforeAll(async () => {
    [openai, receiver] = await Promise.all([startFakeOpenAi(), startHttpsReceiver()]);
    receiver.respondWith((req) => ({ status: req.path.startsWith("/fail") ? 500 : 200 }));
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: {
        ROUTER_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
        ROUTER_OUTBOUND_CA_FILE: receiver.caFile,
        ROUTER_OUTBOUND_RETRIES: "2",
        ROUTER_OUTBOUND_RETRY_DELAY_MS: "50",
      },
    });
    const org = await stack.createOrg("Broadcasting Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-bc-0001" })).status).toBe(201);
    const created = await mgmt.post("/v1/keys", { name: "agent key" });
    expect(created.status).toBe(201);
    inference = gatewayClient(stack.gatewayUrl, created.json.data.key as string);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([openai?.close(), receiver?.close()]);
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  const at = (path: string): ReceivedRequest[] => receiver.requests.filter((r) => r.path === path);

  it("delivers a signed webhook record and an OTLP span for a completion, and records a failing receiver", async () => {
    const hook = await mgmt.post("/v1/broadcast/destinations", { kind: "webhook", url: `${receiver.url}/hook`, name: "Audit" });
    expect(hook.status).toBe(201);
    const secret = hook.json.data.signing_secret as string;
    const traces = await mgmt.post("/v1/broadcast/destinations", {
      kind: "otlp",
      url: `${receiver.url}/v1/traces`,
      header_name: "x-vendor-key",
      header_value: "vendor-secret-7788",
    });
    expect(traces.status).toBe(201);
    expect(traces.json.data).toMatchObject({ header_name: "x-vendor-key", header_hint: "7788" });
    const failing = await mgmt.post("/v1/broadcast/destinations", { kind: "webhook", url: `${receiver.url}/fail` });
    expect(failing.status).toBe(201);
    const workspaces = await mgmt.get("/v1/workspaces");
    const workspaceName = (workspaces.json.data as { name: string }[])[0]?.name;

    openai.script({ text: "The secret completion text.", usage: { prompt: 11, completion: 6 } });
    const res = await inference.post(
      "/v1/chat/completions",
      { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "A private prompt" }] },
      { "x-router-agent": "support-bot", "x-session-id": "conv-99" },
    );
    expect(res.status).toBe(200);
    const generationId = res.json.id as string;

    const webhook = await waitFor(() => at("/hook")[0], { timeoutMs: 20_000, what: "the webhook delivery" });
    expect(verifySignature(webhook.headers[SIGNATURE_HEADER] as string, webhook.body, secret, { nowS: Date.now() / 1000 })).toBe(true);
    expect(JSON.parse(webhook.body)).toMatchObject({
      type: "request.completed",
      test: false,
      request: {
        id: generationId,
        requested_model: "openai/gpt-4o-mini",
        model: "openai/gpt-4o-mini",
        provider: "openai",
        status: "complete",
        tokens: { prompt: 11, completion: 6, total: 17 },
        cost: { total_usd: 0 },
        key_name: "agent key",
        client: workspaceName,
        agent: "support-bot",
        session_id: "conv-99",
      },
    });
    expect(webhook.body).not.toContain("private prompt");
    expect(webhook.body).not.toContain("secret completion");

    const exported = await waitFor(() => at("/v1/traces")[0], { timeoutMs: 20_000, what: "the OTLP export" });
    expect(exported.headers["x-vendor-key"]).toBe("vendor-secret-7788");
    expect(exported.headers["content-type"]).toBe("application/json");
    const otlp = JSON.parse(exported.body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
    const spans = otlp.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    expect(spans).toHaveLength(1);
    const attributes = Object.fromEntries(spans[0]!.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attributes).toMatchObject({
      "gen_ai.request.model": "openai/gpt-4o-mini",
      "gen_ai.response.model": "openai/gpt-4o-mini",
      "gen_ai.provider.name": "openai",
      "gen_ai.response.id": generationId,
      "gen_ai.agent.name": "support-bot",
      "router.key.name": "agent key",
    });
    expect(Number(attributes["gen_ai.usage.input_tokens"])).toBe(11);
    expect(Number(attributes["gen_ai.usage.output_tokens"])).toBe(6);
    expect(exported.body).not.toContain("private prompt");

    // The failing receiver: three attempts (retries 2), then recorded on the destination.
    const recorded = await waitFor(
      async () => {
        const list = await mgmt.get("/v1/broadcast/destinations");
        const row = (list.json.data as Record<string, unknown>[]).find((d) => d.id === failing.json.data.id);
        return row?.last_attempt_at ? row : undefined;
      },
      { timeoutMs: 20_000, what: "the failure on the destination" },
    );
    expect(recorded).toMatchObject({ last_http_status: 500, last_error: "the receiver answered HTTP 500 (after 3 attempts)", last_success_at: null });
    expect(at("/fail")).toHaveLength(3);
    const list = await mgmt.get("/v1/broadcast/destinations");
    const ok = (list.json.data as Record<string, unknown>[]).find((d) => d.id === hook.json.data.id);
    expect(ok).toMatchObject({ last_http_status: 200, last_error: null });
    expect(JSON.stringify(list.json)).not.toContain(secret);
    expect(JSON.stringify(list.json)).not.toContain("vendor-secret");
  });

  it("sends a test record at once and answers with the outcome", async () => {
    const hook = await mgmt.post("/v1/broadcast/destinations", { kind: "webhook", url: `${receiver.url}/test-hook` });
    const res = await mgmt.post(`/v1/broadcast/destinations/${hook.json.data.id}/test`, {});
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ delivered: true, http_status: 200, error: null });
    expect(JSON.parse(at("/test-hook")[0]?.body ?? "{}")).toMatchObject({ test: true, request: { model: "router/test" } });
  });
});
