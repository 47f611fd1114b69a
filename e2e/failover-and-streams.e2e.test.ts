import {
  badChatRequests,
  gatewayClient,
  parseEventStream,
  startFakeOpenAi,
  startStack,
  streamedText,
  waitFor,
  writeOrderedCatalog,
  type FakeUpstream,
  type Stack,
} from "@router/testkit";

/**
 * The chat route's failover, stream, cancellation, metadata, header and generation semantics
 * through the separate-process stack. The organisation holds keys for groq, together and
 * fireworks, which serve several open models; the organisation ranks by price (its default sort), and the
 * catalog these tests start routing with prices each model's endpoints in the order below, so each
 * test uses a model of its own and knows which provider is asked first.
 *
 * Endpoint health and circuit breakers are per endpoint, so one test's failures never reorder
 * another test's model.
 */
const PROVIDER_ORDER: Record<string, string[]> = {
  "meta-llama/llama-3.3-70b-instruct": ["groq", "together", "fireworks"],
  "meta-llama/llama-4-scout": ["groq", "fireworks", "together"],
  "meta-llama/llama-4-maverick": ["groq", "fireworks", "together"],
  "openai/gpt-oss-120b": ["fireworks", "together", "groq"],
  "qwen/qwen-2.5-72b-instruct": ["fireworks", "together"],
  "deepseek/deepseek-r1": ["together", "fireworks"],
  "qwen/qwen-2.5-coder-32b-instruct": ["together"],
  "moonshotai/kimi-k2": ["fireworks", "groq", "together"],
  "meta-llama/llama-3.1-8b-instruct": ["groq", "together", "fireworks"],
  "qwen/qwen3-32b": ["groq"],
};

type Client = ReturnType<typeof gatewayClient>;
const user = (text = "Hello") => [{ role: "user", content: text }];
/** Provider timeouts short enough for a test; the stream keepalive every 200 ms. */
const TIMEOUT_MS = 1500;

describe("failover, streams and request semantics through the separate-process stack", () => {
  let stack: Stack;
  let groq: FakeUpstream;
  let together: FakeUpstream;
  let fireworks: FakeUpstream;
  let mgmt: Client;
  let inference: Client;
  let inferenceKey: string;

  beforeAll(async () => {
    [groq, together, fireworks] = await Promise.all([startFakeOpenAi(), startFakeOpenAi(), startFakeOpenAi()]);
    stack = await startStack({
      providerBaseUrls: { groq: groq.url, together: together.url, fireworks: fireworks.url },
      extraEnv: {
        GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: String(TIMEOUT_MS),
        GATEWAY_UPSTREAM_STREAM_HEADERS_TIMEOUT_MS: String(TIMEOUT_MS),
        GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS: String(TIMEOUT_MS),
        GATEWAY_STREAM_KEEPALIVE_MS: "200",
        ROUTING_CATALOG_FILE: writeOrderedCatalog(PROVIDER_ORDER),
      },
    });
    const org = await stack.createOrg("Failover Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const [provider, key] of [
      ["groq", "gsk-failover-0001"],
      ["together", "tg-failover-0002"],
      ["fireworks", "fw-failover-0003"],
    ]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: key })).status).toBe(201);
    }
    // Routing's default ranking is a weighted draw; the price sort makes the ordered catalog's order the order tried.
    expect((await mgmt.put("/v1/routing/defaults", { default_sort: "price" })).status).toBe(200);
    inferenceKey = (await mgmt.post("/v1/keys", { name: "app" })).json.data.key as string;
    inference = gatewayClient(stack.gatewayUrl, inferenceKey);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([groq, together, fireworks].map((f) => f?.close()));
  });

  beforeEach(() => {
    for (const f of [groq, together, fireworks]) f.reset();
  });

  const upstreamCalls = () => groq.requests.length + together.requests.length + fireworks.requests.length;

  const attemptsOf = (id: string, count: number) =>
    waitFor(
      async () => {
        const rows = (await mgmt.get(`/v1/activity/upstream?request=${id}`)).json.data as Array<Record<string, any>> | undefined;
        return rows?.length === count ? [...rows].sort((a, b) => a.attempt - b.attempt) : undefined;
      },
      { timeoutMs: 15_000, what: `${count} upstream attempts of ${id}` },
    );

  const requestRow = (id: string) =>
    waitFor(
      async () => {
        const r = await mgmt.get(`/v1/activity/requests/${id}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      },
      { timeoutMs: 15_000, what: `activity request ${id}` },
    );

  describe("failover before the first byte", () => {
    it("moves to the next endpoint after a 503 and records both attempts, never the provider's own words", async () => {
      groq.script({ failure: { kind: "status", status: 503, code: "overloaded", message: "echo of the secret prompt" } });
      together.script({ text: "From together." });
      const res = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.3-70b-instruct", messages: user() });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ model: "meta-llama/llama-3.3-70b-instruct", provider: "together" });
      expect(res.json.choices[0].message.content).toBe("From together.");
      expect(fireworks.requests).toHaveLength(0);

      const [first, second] = await attemptsOf(res.json.id as string, 2);
      expect(first).toMatchObject({
        attempt: 1,
        model_id: "meta-llama/llama-3.3-70b-instruct",
        provider_slug: "groq",
        endpoint_id: "ep_groq_llama-3-3-70b-instruct",
        status: "error",
        http_status: 503,
        error_code: "overloaded",
        is_byok: true,
      });
      expect(first?.error_message).toMatch(/groq/);
      expect(first?.error_message).toMatch(/503/);
      expect(first?.error_message).toMatch(/overloaded/);
      expect(first?.error_message).not.toMatch(/secret prompt/);
      expect(first?.duration_ms).toEqual(expect.any(Number));
      expect(second).toMatchObject({ attempt: 2, provider_slug: "together", status: "ok", http_status: 200, error_code: null });
      expect(second?.ttft_ms).toEqual(expect.any(Number));
      const row = await requestRow(res.json.id as string);
      expect(row).toMatchObject({ served_model: "meta-llama/llama-3.3-70b-instruct", provider_slug: "together", status: "complete" });
    });

    it("moves on after a dropped connection and after a 429, each on the next endpoint", async () => {
      groq.script({ failure: { kind: "reset" } }, { failure: { kind: "status", status: 429, code: "rate_limit_exceeded", retryAfter: "3" } });
      together.script({ text: "after reset" }, { text: "after 429" });
      const model = "meta-llama/llama-3.3-70b-instruct";
      const afterReset = await inference.post("/v1/chat/completions", { model, messages: user() });
      expect(afterReset.status).toBe(200);
      expect(afterReset.json.choices[0].message.content).toBe("after reset");
      const [reset] = await attemptsOf(afterReset.json.id as string, 2);
      expect(reset).toMatchObject({ provider_slug: "groq", status: "error", http_status: null, error_code: "router.upstream_unreachable" });

      const after429 = await inference.post("/v1/chat/completions", { model, messages: user() });
      expect(after429.status).toBe(200);
      expect(after429.json.choices[0].message.content).toBe("after 429");
      const [limited] = await attemptsOf(after429.json.id as string, 2);
      expect(limited).toMatchObject({ provider_slug: "groq", status: "error", http_status: 429, error_code: "rate_limit_exceeded" });
    });

    it("moves on when a provider sends no headers within the timeout", async () => {
      fireworks.script({ failure: { kind: "hang" } });
      together.script({ text: "on time" });
      const res = await inference.post("/v1/chat/completions", { model: "openai/gpt-oss-120b", messages: user() });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ provider: "together", choices: [{ message: { content: "on time" } }] });
      // The gateway gave up on the provider that never answered: it closed that request itself.
      await waitFor(() => fireworks.requests.at(-1)?.clientClosed, { what: "the gateway to close the hanging request" });
      const [timedOut] = await attemptsOf(res.json.id as string, 2);
      expect(timedOut).toMatchObject({ provider_slug: "fireworks", status: "error", error_code: "router.upstream_timeout" });
    });

    it("walks the request's models chain and answers with the model that served", async () => {
      groq.script({ failure: { kind: "status", status: 500, code: "internal" } }, { text: "from the fallback model" });
      const res = await inference.post("/v1/chat/completions", {
        model: "qwen/qwen3-32b",
        models: ["meta-llama/llama-3.1-8b-instruct"],
        messages: user(),
      });
      expect(res.status).toBe(200);
      expect(res.json.model).toBe("meta-llama/llama-3.1-8b-instruct");
      expect(res.json.choices[0].message.content).toBe("from the fallback model");
      expect(groq.requests.map((r) => (r.body as { model: string }).model)).toEqual(["qwen/qwen3-32b", "llama-3.1-8b-instant"]);
      const row = await requestRow(res.json.id as string);
      expect(row).toMatchObject({ requested_model: "qwen/qwen3-32b", served_model: "meta-llama/llama-3.1-8b-instruct" });
    });

    it("does not fail over on a 400: the request itself is wrong", async () => {
      groq.script({ failure: { kind: "status", status: 400, code: "invalid_request_error", message: "messages too long" } });
      const res = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.3-70b-instruct", messages: user() });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("upstream_error");
      // The caller sees the provider's words in this one response.
      expect(res.json.error.message).toMatch(/messages too long/);
      expect(together.requests).toHaveLength(0);
      expect(fireworks.requests).toHaveLength(0);
    });
  });

  describe("when every candidate fails", () => {
    it("answers 502 upstream_error with router_metadata beside the error, and records the last provider's status", async () => {
      fireworks.script({ failure: { kind: "status", status: 500, code: "server_error" } });
      together.script({ failure: { kind: "status", status: 503, code: "unavailable", message: "the prompt was: hello" } });
      const res = await inference.post(
        "/v1/chat/completions",
        { model: "qwen/qwen-2.5-72b-instruct", messages: user() },
        { "X-Router-Metadata": "enabled" },
      );
      expect(res.status).toBe(502);
      expect(res.json.error).toMatchObject({ status: 502, code: "upstream_error" });
      expect(res.json.error.message).toMatch(/together/);
      const meta = res.json.router_metadata;
      expect(meta).toMatchObject({ requested: "qwen/qwen-2.5-72b-instruct", served: null });
      expect(meta.attempts.map((a: any) => [a.provider, a.status, a.http_status])).toEqual([
        ["fireworks", "error", 500],
        ["together", "error", 503],
      ]);
      const id = meta.generation_id as string;
      const row = await requestRow(id);
      expect(row).toMatchObject({ status: "error", served_model: null, error_code: "unavailable", finish_reason: "error" });
      expect(row.error_message).toMatch(/together/);
      expect(row.error_message).not.toMatch(/the prompt was/);
      const attempts = await attemptsOf(id, 2);
      expect(attempts.every((a) => a.status === "error")).toBe(true);
    });

    it("keeps a provider 429 as 429 with its Retry-After", async () => {
      together.script({ failure: { kind: "status", status: 429, code: "rate_limited", retryAfter: "17" } });
      fireworks.script({ failure: { kind: "status", status: 429, code: "rate_limited", retryAfter: "17" } });
      const res = await inference.post("/v1/chat/completions", { model: "deepseek/deepseek-r1", messages: user() });
      expect(res.status).toBe(429);
      expect(res.json.error.code).toBe("upstream_error");
      expect(res.headers.get("retry-after")).toBe("17");
    });

    it("answers 502 when every candidate refused the organisation's provider key, naming the provider's 401", async () => {
      together.script({ failure: { kind: "status", status: 401, code: "invalid_api_key" } });
      fireworks.script({ failure: { kind: "status", status: 401, code: "invalid_api_key" } });
      const res = await inference.post("/v1/chat/completions", { model: "deepseek/deepseek-r1", messages: user() });
      expect(res.status).toBe(502);
      expect(res.json.error).toMatchObject({ code: "upstream_error", details: { provider_status: 401, provider_code: "invalid_api_key", attempts: 2 } });
    });

    it("answers inside the stream when every candidate of a stream fails: one error chunk, then [DONE]", async () => {
      together.script({ failure: { kind: "status", status: 500, code: "boom" } });
      const res = await inference.stream({ model: "qwen/qwen-2.5-coder-32b-instruct", messages: user() }, { "X-Router-Metadata": "enabled" });
      // Status and headers went out with the first keepalive, before any provider answered.
      expect(res.status).toBe(200);
      expect(res.done).toBe(true);
      expect(res.chunks).toHaveLength(1);
      const [only] = res.chunks;
      expect(only.error).toMatchObject({ code: "upstream_error" });
      expect(only.choices[0].finish_reason).toBe("error");
      expect(only.router_metadata.attempts).toHaveLength(1);
    });
  });

  describe("streams", () => {
    it("sends keepalive comments while the provider has not answered, then the chunks", async () => {
      groq.script({ headersDelayMs: 700, chunks: ["late ", "but ", "here"] });
      const res = await inference.stream({ model: "meta-llama/llama-3.1-8b-instruct", messages: user() });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(res.text.startsWith(": router processing\n\n")).toBe(true);
      expect(res.comments.length).toBeGreaterThanOrEqual(3);
      expect(streamedText(res.chunks)).toBe("late but here");
    });

    it("moves on when a stream ends before its first content chunk; the client sees only the second provider", async () => {
      groq.script({ failure: { kind: "empty-stream" } });
      fireworks.script({ chunks: ["second ", "wins"] });
      const res = await inference.stream({ model: "meta-llama/llama-4-scout", messages: user() });
      expect(res.done).toBe(true);
      expect(streamedText(res.chunks)).toBe("second wins");
      const content = res.chunks.filter((c) => c.choices?.length);
      expect(content.every((c) => c.provider === "fireworks")).toBe(true);
      const [empty, served] = await attemptsOf(res.chunks[0].id as string, 2);
      expect(empty).toMatchObject({ provider_slug: "groq", status: "error", error_code: "router.upstream_empty_stream" });
      expect(served).toMatchObject({ provider_slug: "fireworks", status: "ok" });
    });

    it("never fails over after the first content chunk: the stream ends with one error chunk, then [DONE]", async () => {
      groq.script({ chunks: ["partial ", "answer ", "lost"], failure: { kind: "break-after", chunks: 1 }, usage: { prompt: 5, completion: 3 } });
      const res = await inference.stream({ model: "meta-llama/llama-4-maverick", messages: user() }, { "X-Metadata": "enabled" });
      expect(res.status).toBe(200);
      expect(res.done).toBe(true);
      expect(streamedText(res.chunks)).toBe("partial ");
      expect(fireworks.requests).toHaveLength(0);
      expect(together.requests).toHaveLength(0);
      const errors = res.chunks.filter((c) => c.error);
      expect(errors).toHaveLength(1);
      const last = res.chunks[res.chunks.length - 1];
      expect(last).toBe(errors[0]);
      expect(last.error.code).toBe("upstream_error");
      expect(last.choices[0].finish_reason).toBe("error");
      expect(last.router_metadata.served).toMatchObject({ provider: "groq" });

      const id = res.chunks[0].id as string;
      const [attempt] = await attemptsOf(id, 1);
      // A stream that shipped bytes and then failed is `ok` with an error message.
      expect(attempt).toMatchObject({ provider_slug: "groq", status: "ok", error_code: "router.upstream_stream_broken" });
      expect(attempt?.error_message).toMatch(/groq/);
      const row = await requestRow(id);
      expect(row).toMatchObject({ status: "error", finish_reason: "error", served_model: "meta-llama/llama-4-maverick" });
    });

    it("puts usage and router_metadata on the final chunk when asked", async () => {
      groq.script({ chunks: ["a", "b"], usage: { prompt: 9, completion: 2 } });
      const res = await inference.stream({ model: "meta-llama/llama-3.1-8b-instruct", messages: user() }, { "X-Router-Metadata": "enabled" });
      const last = res.chunks[res.chunks.length - 1];
      expect(last.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
      expect(last.router_metadata).toMatchObject({
        generation_id: last.id,
        requested: "meta-llama/llama-3.1-8b-instruct",
        served: { model: "meta-llama/llama-3.1-8b-instruct", provider: "groq", endpoint_id: "ep_groq_llama-3-1-8b-instruct" },
        // The first provider of the test catalog's order is priced at $1 per million each way.
        pricing: { prompt_per_million: 1, completion_per_million: 1 },
        is_byok: true,
      });
      expect(res.chunks.slice(0, -1).some((c) => c.router_metadata)).toBe(false);

      const plain = await inference.stream({ model: "meta-llama/llama-3.1-8b-instruct", messages: user() });
      expect(plain.chunks.some((c) => c.router_metadata)).toBe(false);
    });
  });

  describe("router_metadata on non-stream responses", () => {
    it("says why this model, provider and price when asked, and is absent otherwise", async () => {
      groq.script({ failure: { kind: "status", status: 502, code: "bad_gateway" } });
      const res = await inference.post(
        "/v1/chat/completions",
        { model: "meta-llama/llama-3.3-70b-instruct", messages: user() },
        { "X-Router-Metadata": "enabled" },
      );
      expect(res.status).toBe(200);
      const meta = res.json.router_metadata;
      expect(meta).toMatchObject({
        generation_id: res.json.id,
        requested: "meta-llama/llama-3.3-70b-instruct",
        strategy: "direct",
        served: { provider: "together", fallback: true, model_rank: 1 },
        pricing: { price_version_id: expect.any(Number) },
      });
      expect(meta.cascade_size).toBeGreaterThanOrEqual(3);
      expect(meta.attempts.map((a: any) => a.provider)).toEqual(["groq", "together"]);
      expect(meta.routing_overhead_ms).toEqual(expect.any(Number));

      const plain = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.3-70b-instruct", messages: user() });
      expect(plain.json.router_metadata).toBeUndefined();
    });
  });

  describe("cancellation", () => {
    it("aborts the provider call when a streaming client disconnects and records the generation cancelled with the usage seen", async () => {
      groq.script({ chunks: Array.from({ length: 40 }, (_, i) => `word${i} `), chunkDelayMs: 100 });
      const abort = new AbortController();
      const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        signal: abort.signal,
        headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "meta-llama/llama-3.1-8b-instruct", stream: true, messages: user() }),
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      let id = "";
      while (!id) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        const content = parseEventStream(text.slice(0, text.lastIndexOf("\n\n") + 2)).chunks.find((c) => c.choices?.[0]?.delta?.content);
        if (content) id = content.id as string;
      }
      expect(id).toMatch(/^gen-/);
      abort.abort();

      await waitFor(() => groq.requests[0]?.clientClosed === true, { what: "the provider call to be aborted" });
      const gen = await waitFor(async () => {
        const r = await inference.get(`/v1/generation?id=${id}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      });
      expect(gen).toMatchObject({ id, cancelled: true, streamed: true, model: "meta-llama/llama-3.1-8b-instruct" });
      expect(gen.tokens_completion).toBeGreaterThan(0);
      expect(gen.tokens_completion).toBeLessThan(40);
      const row = await requestRow(id);
      expect(row).toMatchObject({ status: "cancelled", cancelled: true });
    });

    it("aborts the provider call when a client gives up waiting for a non-stream answer, and records it cancelled", async () => {
      fireworks.script({ headersDelayMs: 1000, text: "too late" });
      const abort = new AbortController();
      const pending = fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        signal: abort.signal,
        headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "deepseek/deepseek-chat", messages: user("wait for me") }),
      }).catch((err: unknown) => err);
      await waitFor(() => fireworks.requests.length === 1, { what: "the provider call" });
      abort.abort();
      expect(await pending).toMatchObject({ name: "AbortError" });
      await waitFor(() => fireworks.requests[0]?.clientClosed === true, { what: "the provider call to be aborted" });
      expect(together.requests).toHaveLength(0);
      const row = await waitFor(async () => {
        const rows = (await mgmt.get("/v1/activity?status=cancelled&limit=50")).json.data as Array<Record<string, any>>;
        return rows?.find((r) => r.requested_model === "deepseek/deepseek-chat");
      });
      expect(row).toMatchObject({ cancelled: true, streamed: false });
    });
  });

  describe("request headers", () => {
    it.each(["-leading-dash", "has space", "x".repeat(65), "semi;colon"])(
      "refuses a malformed X-Router-Agent %j with 400 before any provider is asked",
      async (agent) => {
        const res = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.1-8b-instruct", messages: user() }, { "X-Router-Agent": agent });
        expect(res.status).toBe(400);
        expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "X-Router-Agent" } });
        expect(upstreamCalls()).toBe(0);
      },
    );

    it.each([
      ["X-App-Categories", "coding,chat,roleplay"],
      ["X-App-Visibility", "secret"],
      ["X-Router-Metadata", "maybe"],
      ["X-Metadata", "yes"],
      ["X-App-Categories", "coding,not*a*category"],
      ["X-Session-Id", "s".repeat(257)],
    ])("refuses %s: %s with 400 naming the header", async (header, value) => {
      const res = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.1-8b-instruct", messages: user() }, { [header]: value });
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe(header);
      expect(upstreamCalls()).toBe(0);
    });

    it("records the agent, the session and app attribution, keeping only the referer's scheme and host", async () => {
      const res = await inference.post(
        "/v1/chat/completions",
        { model: "meta-llama/llama-3.1-8b-instruct", messages: user() },
        {
          "X-Router-Agent": "planner:v2.1_a-b",
          "X-Session-Id": "sess-e2e-42",
          "HTTP-Referer": "https://app.example.com/private/path?token=abc#frag",
          "X-Title": "Acme Assistant",
          "X-App-Visibility": "hidden",
          "X-App-Categories": "coding, chat",
          "User-Agent": "e2e-sdk/1.0",
        },
      );
      expect(res.status).toBe(200);
      const id = res.json.id as string;
      const row = await requestRow(id);
      expect(row).toMatchObject({
        agent: "planner:v2.1_a-b",
        session_id: "sess-e2e-42",
        app_title: "Acme Assistant",
        http_referer: "https://app.example.com",
        app_id: expect.stringMatching(/^app_/),
      });
      expect(JSON.stringify(row)).not.toMatch(/private\/path|token=abc/);
      const gen = (await inference.get(`/v1/generation?id=${id}`)).json.data;
      expect(gen).toMatchObject({ http_referer: "https://app.example.com", app_title: "Acme Assistant", user_agent: "e2e-sdk/1.0" });
    });

    it.each([
      ["X-App-Title", "App Title"],
      ["X-Router-Title", "Router Title"],
    ])("takes the title from %s when X-Title is absent", async (header, title) => {
      const res = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.1-8b-instruct", messages: user() }, { [header]: title });
      expect(res.status).toBe(200);
      expect((await requestRow(res.json.id as string)).app_title).toBe(title);
    });
  });

  describe("GET /v1/generation", () => {
    it("answers right after a stream's [DONE], with metadata only", async () => {
      groq.script({ chunks: ["secret ", "completion"], usage: { prompt: 4, completion: 2 } });
      const res = await inference.stream({ model: "meta-llama/llama-3.1-8b-instruct", messages: user("a secret prompt") });
      const id = res.chunks[0].id as string;
      const gen = await inference.get(`/v1/generation?id=${id}`);
      expect(gen.status).toBe(200);
      expect(gen.json.data).toMatchObject({
        id,
        model: "meta-llama/llama-3.1-8b-instruct",
        // The catalog's display name, carried from routing's plan through the event.
        provider_name: "Groq",
        endpoint_id: "ep_groq_llama-3-1-8b-instruct",
        streamed: true,
        cancelled: false,
        is_byok: true,
        total_cost: 0,
        finish_reason: "stop",
        native_finish_reason: "stop",
        latency: expect.any(Number),
        generation_time: expect.any(Number),
        price_version_ids: [expect.any(Number)],
        app_id: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      expect(gen.json.data).toHaveProperty("quantization");
      expect(gen.json.data.usage_lines.map((l: any) => [l.kind, l.tokens])).toEqual([
        ["prompt", 4],
        ["completion", 2],
      ]);
      expect(gen.text).not.toMatch(/secret/);
    });

    it("needs the id, refuses a management key and never shows another organisation's generation", async () => {
      const res = await inference.post("/v1/chat/completions", { model: "meta-llama/llama-3.1-8b-instruct", messages: user() });
      const id = res.json.id as string;
      const missing = await inference.get("/v1/generation");
      expect(missing.status).toBe(400);
      expect(missing.json.error.details.field).toBe("id");
      expect((await mgmt.get(`/v1/generation?id=${id}`)).status).toBe(403);

      const other = await stack.createOrg("Other Co");
      const otherMgmt = gatewayClient(stack.gatewayUrl, other.managementKey);
      const otherKey = (await otherMgmt.post("/v1/keys", { name: "k" })).json.data.key as string;
      const stranger = await gatewayClient(stack.gatewayUrl, otherKey).get(`/v1/generation?id=${id}`);
      expect(stranger.status).toBe(404);
      expect(stranger.text).not.toMatch(/llama/);
    });
  });

  describe("circuit breakers", () => {
    it("skips an endpoint that keeps failing, and routing's endpoint health sees the failures", async () => {
      const model = "moonshotai/kimi-k2";
      fireworks.setDefault({ failure: { kind: "status", status: 500, code: "server_error" } });
      try {
        for (let i = 0; i < 5; i++) {
          const res = await inference.post("/v1/chat/completions", { model, messages: user() });
          expect(res.status).toBe(200);
          expect(res.json.provider).toBe("groq");
        }
        expect(fireworks.requests).toHaveLength(5);
        const res = await inference.post("/v1/chat/completions", { model, messages: user() }, { "X-Router-Metadata": "enabled" });
        expect(res.status).toBe(200);
        expect(fireworks.requests).toHaveLength(5);
        const skipped = res.json.router_metadata.skipped as Array<Record<string, unknown>>;
        const attempts = res.json.router_metadata.attempts as Array<Record<string, unknown>>;
        // Open circuit, or already moved last by routing's health signal: either way never asked.
        expect(attempts.map((a) => a.provider)).toEqual(["groq"]);
        expect(skipped.filter((s) => s.provider === "fireworks").every((s) => s.reason === "circuit_open")).toBe(true);
      } finally {
        fireworks.setDefault({});
      }
      const endpoints = await waitFor(async () => {
        const r = await fetch(`${stack.gatewayUrl}/v1/models/${model}/endpoints`);
        const body = (await r.json()) as { data: Array<Record<string, any>> | { endpoints: Array<Record<string, any>> } };
        const list = Array.isArray(body.data) ? body.data : body.data.endpoints;
        const fw = list.find((e) => e.provider === "fireworks" || e.provider_slug === "fireworks");
        return fw && typeof fw.uptime === "number" && fw.uptime < 1 ? fw : undefined;
      }, { timeoutMs: 20_000, what: "fireworks' uptime to fall" });
      expect(endpoints.uptime).toBe(0);
    });
  });

  describe("bad input on every field: a 400 naming it, before any provider is asked", () => {
    it.each(badChatRequests({ model: "meta-llama/llama-3.1-8b-instruct", messages: user() }))("%s", async (field, body) => {
      const res = await inference.post("/v1/chat/completions", body);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
      expect(upstreamCalls()).toBe(0);
    });

    it("answers malformed JSON with a 400 envelope", async () => {
      const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
        body: "{not json",
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
      expect(upstreamCalls()).toBe(0);
    });

    it("answers a body past 10 MB with 413 and a body that is not JSON with 400 naming the body", async () => {
      const big = JSON.stringify({ model: "meta-llama/llama-3.1-8b-instruct", messages: [{ role: "user", content: "x".repeat(11 * 1024 * 1024) }] });
      const tooLarge = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
        body: big,
      });
      expect(tooLarge.status).toBe(413);
      expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
      const text = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "text/plain" },
        body: "hello",
      });
      expect(text.status).toBe(400);
      expect(((await text.json()) as { error: { details: { field: string } } }).error.details.field).toBe("body");
      expect(upstreamCalls()).toBe(0);
    });

    it("asks for a bearer key on the chat route with 401 and WWW-Authenticate, and serves its other spellings", async () => {
      const missing = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "meta-llama/llama-3.1-8b-instruct", messages: user() }),
      });
      expect(missing.status).toBe(401);
      expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="router"');
      expect(((await missing.json()) as { error: { details: { field: string } } }).error.details.field).toBe("Authorization");
      expect(upstreamCalls()).toBe(0);
      // Express matched any letter case and a trailing slash; the route served ahead of it does too.
      for (const path of ["/v1/chat/completions/", "/V1/Chat/Completions?trace=1"]) {
        const res = await fetch(`${stack.gatewayUrl}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "meta-llama/llama-3.1-8b-instruct", messages: [] }),
        });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: { details: { field: string } } }).error.details.field).toBe("messages");
      }
    });
  });
});
