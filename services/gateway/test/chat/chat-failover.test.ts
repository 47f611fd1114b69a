import { streamedText } from "@router/testkit";
import { startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

const FAST_FAIL = { timeouts: { headersMs: 400, streamHeadersMs: 400, idleMs: 400 }, breaker: { volumeThreshold: 1_000 } };
const PROVIDER_WORDS = "the prompt said: my secret plan";

describe("failover before the first byte", () => {
  let h: ChatHarness;
  beforeAll(async () => {
    h = await startChatHarness({ dispatcher: FAST_FAIL });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    for (const f of Object.values(h.fakes)) f.reset();
  });

  it("moves to the next endpoint after a 5xx and records both attempts", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 503, message: PROVIDER_WORDS } });
    h.fakes.openai.script({ text: "from openai" });
    const res = await h.post({ model: "test/multi", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ model: "test/multi", provider: "openai", choices: [{ message: { content: "from openai" } }] });
    expect(res.body.router_metadata.attempts).toMatchObject([
      { attempt: 1, provider: "groq", status: "error", http_status: 503, error_code: "service_unavailable" },
      { attempt: 2, provider: "openai", status: "ok", http_status: 200 },
    ]);
    const event = await h.eventFor(res.body.id);
    expect(event.attempts.map((a) => [a.attempt, a.providerSlug, a.status, a.httpStatus])).toEqual([
      [1, "groq", "error", 503],
      [2, "openai", "ok", 200],
    ]);
    expect(event.attempts[0]!.errorMessage).toBe("groq returned HTTP 503 (service_unavailable)");
    expect(event.providerSlug).toBe("openai");
    expect(h.fakes.groq.requests[0]!.headers.authorization).toBe("Bearer sk-groq-org-key");
  });

  it("walks the models chain and answers with the model that served", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 500 } });
    h.fakes.mistral.script({ text: "spare here" });
    const res = await h.post({ model: "test/fast", models: ["test/spare"], messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe("test/spare");
    expect(res.body.router_metadata).toMatchObject({
      requested: "test/fast",
      strategy: "fallback",
      served: { model: "test/spare", provider: "mistral", model_rank: 2, fallback: true },
    });
  });

  it.each([
    ["a reset connection", { kind: "reset" as const }, "router.upstream_unreachable", null],
    ["a provider that never answers", { kind: "hang" as const }, "router.upstream_timeout", null],
    ["a 429", { kind: "status" as const, status: 429 }, "rate_limit_exceeded", 429],
    ["a 401 for the credential", { kind: "status" as const, status: 401 }, "invalid_api_key", 401],
  ])("fails over after %s", async (_what, failure, code, httpStatus) => {
    h.fakes.groq.script({ failure });
    const res = await h.post({ model: "test/multi", messages: userMessage() });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("openai");
    const event = await h.eventFor(res.body.id);
    expect(event.attempts[0]).toMatchObject({ status: "error", errorCode: code });
    expect(event.attempts[0]!.httpStatus ?? null).toBe(httpStatus);
  });

  it("does not fail over on a 400: the request itself is wrong; the caller sees the provider's words, records never do", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 400, code: "invalid_request_error", message: PROVIDER_WORDS } });
    const res = await h.post({ model: "test/multi", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ status: 400, code: "upstream_error", details: { provider: "groq", provider_status: 400, provider_code: "invalid_request_error" } });
    expect(res.body.error.message).toContain(PROVIDER_WORDS);
    expect(h.fakes.openai.requests).toHaveLength(0);
    const event = await h.eventFor(res.body.router_metadata.generation_id);
    expect(event.status).toBe("error");
    expect(event.errorCode).toBe("invalid_request_error");
    expect(event.errorMessage).toBe("groq returned HTTP 400 (invalid_request_error)");
    expect(JSON.stringify(event, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain("secret plan");
  });

  it("answers 502 upstream_error when every endpoint fails with 5xx, with metadata beside the error", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 500, message: PROVIDER_WORDS } });
    h.fakes.openai.script({ failure: { kind: "status", status: 503, message: PROVIDER_WORDS } });
    const res = await h.post({ model: "test/multi", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ status: 502, code: "upstream_error", details: { provider: "openai", provider_status: 503, attempts: 2 } });
    expect(res.body.router_metadata.attempts).toHaveLength(2);
    expect(res.body.router_metadata.served).toBeNull();
    const event = await h.eventFor(res.body.router_metadata.generation_id);
    expect(event).toMatchObject({ status: "error", errorMessage: "openai returned HTTP 503 (service_unavailable)", finishReason: "error" });
  });

  it.each([401, 403, 404])("answers 502 when every endpoint fails with %i: the organisation's provider trouble is not the caller's key", async (status) => {
    h.fakes.groq.script({ failure: { kind: "status", status } });
    h.fakes.openai.script({ failure: { kind: "status", status } });
    const res = await h.post({ model: "test/multi", messages: userMessage() });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ status: 502, code: "upstream_error", details: { provider: "openai", provider_status: status, attempts: 2 } });
  });

  it("keeps a provider's 422 for the caller: the request itself was refused", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 422, code: "unprocessable" } });
    const res = await h.post({ model: "test/multi", messages: userMessage() });
    expect(res.status).toBe(422);
    expect(h.fakes.openai.requests).toHaveLength(0);
  });

  it("records a provider code that is not a code (a sentence, an echo) as the status alone", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 500, code: PROVIDER_WORDS } });
    h.fakes.openai.script({ text: "fine" });
    const res = await h.post({ model: "test/multi", messages: userMessage() });
    expect(res.status).toBe(200);
    const event = await h.eventFor(res.body.id);
    expect(event.attempts[0]).toMatchObject({ errorCode: "http_500", errorMessage: "groq returned HTTP 500" });
    expect(JSON.stringify(event, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain("secret plan");
  });

  it.each([false, true])("fails over when an answer finishes with error before any content (stream: %s)", async (stream) => {
    h.fakes.groq.script({ text: "", finishReason: "error" });
    h.fakes.openai.script({ text: "from openai" });
    const body = { model: "test/multi", messages: userMessage(), stream };
    const res = stream ? await h.stream(body) : await h.post(body);
    expect(res.status).toBe(200);
    const id = stream ? (res as Awaited<ReturnType<ChatHarness["stream"]>>).chunks[0].id : (res as Awaited<ReturnType<ChatHarness["post"]>>).body.id;
    const event = await h.eventFor(id);
    expect(event.providerSlug).toBe("openai");
    expect(event.attempts[0]).toMatchObject({ status: "error", errorCode: "error", errorMessage: "groq ended its answer with an error before any content (error)" });
  });

  it("answers 429 with the provider's Retry-After when the last endpoint was rate limited", async () => {
    h.fakes.groq.script({ failure: { kind: "status", status: 500 } });
    h.fakes.openai.script({ failure: { kind: "status", status: 429, retryAfter: "7" } });
    const res = await h.post({ model: "test/multi", messages: userMessage() });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe("upstream_error");
    expect(res.headers.get("retry-after")).toBe("7");
  });

  it("fails over when the request cannot be expressed for a provider, without calling it", async () => {
    h.fakes.openai.script({ text: "openai took it" });
    const res = await h.post({
      model: "test/claude",
      models: ["test/gpt"],
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "[1]" } }] },
        { role: "tool", tool_call_id: "c1", content: "ok" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe("test/gpt");
    expect(h.fakes.anthropic.requests).toHaveLength(0);
    const event = await h.eventFor(res.body.id);
    expect(event.attempts[0]).toMatchObject({ providerSlug: "anthropic", status: "error", errorCode: "router.unsupported_request" });
    expect(event.attempts[0]!.httpStatus).toBeUndefined();
  });

  it("moves on when a whole answer stalls mid-body, recording the attempt with the status it reached", async () => {
    h.fakes.groq.script({ text: "never whole", failure: { kind: "stall-body" } });
    h.fakes.openai.script({ text: "whole" });
    const res = await h.post({ model: "test/multi", messages: userMessage() });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe("whole");
    const event = await h.eventFor(res.body.id);
    expect(event.attempts[0]).toMatchObject({ providerSlug: "groq", status: "error", errorCode: "router.upstream_timeout", httpStatus: 200 });
    expect(event.attempts[1]).toMatchObject({ providerSlug: "openai", status: "ok", httpStatus: 200 });
  });

  describe("streams", () => {
    it("moves on when a stream ends before its first content chunk; the client sees only the second", async () => {
      h.fakes.groq.script({ text: "never", failure: { kind: "empty-stream" } });
      h.fakes.openai.script({ text: "second wins" });
      const res = await h.stream({ model: "test/multi", messages: userMessage(), stream: true });
      expect(res.status).toBe(200);
      expect(streamedText(res.chunks)).toBe("second wins");
      expect(res.chunks.every((c) => c.provider === "openai" && !c.error)).toBe(true);
      const event = await h.eventFor(res.chunks[0].id);
      expect(event.attempts[0]).toMatchObject({ providerSlug: "groq", status: "error", errorCode: "router.upstream_empty_stream", httpStatus: 200 });
    });

    it("moves on after an error event before any content", async () => {
      h.fakes.anthropic.script({ failure: { kind: "stream-error", chunks: 0, code: "overloaded_error" } });
      h.fakes.openai.script({ text: "backup" });
      const res = await h.stream({ model: "test/claude", models: ["test/gpt"], messages: userMessage(), stream: true });
      expect(streamedText(res.chunks)).toBe("backup");
      const event = await h.eventFor(res.chunks[0].id);
      expect(event.attempts[0]).toMatchObject({ providerSlug: "anthropic", errorCode: "overloaded_error", status: "error" });
    });

    it("moves on when the provider sends no headers in time", async () => {
      h.fakes.groq.script({ failure: { kind: "hang" } });
      h.fakes.openai.script({ text: "on time" });
      const res = await h.stream({ model: "test/multi", messages: userMessage(), stream: true });
      expect(streamedText(res.chunks)).toBe("on time");
    });

    it("never fails over after the first content chunk: it ends with an error chunk and [DONE]", async () => {
      h.fakes.groq.script({ chunks: ["partial ", "answer"], failure: { kind: "break-after", chunks: 1 } });
      const res = await h.stream({ model: "test/multi", messages: userMessage(), stream: true }, { headers: { "X-Router-Metadata": "enabled" } });
      expect(res.status).toBe(200);
      expect(streamedText(res.chunks)).toBe("partial ");
      expect(h.fakes.openai.requests).toHaveLength(0);
      const last = res.chunks[res.chunks.length - 1];
      expect(last.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("groq stream broke") });
      expect(last.choices).toEqual([{ index: 0, delta: {}, finish_reason: "error", native_finish_reason: null }]);
      expect(last.router_metadata.attempts[0]).toMatchObject({ provider: "groq", status: "ok" });
      expect(res.done).toBe(true);
      const event = await h.eventFor(last.id);
      expect(event).toMatchObject({ status: "error", finishReason: "error", errorCode: "" });
      expect(event.attempts).toHaveLength(1);
      expect(event.attempts[0]).toMatchObject({ status: "ok", errorCode: "router.upstream_stream_broken", httpStatus: 200 });
    });

    it("ends with an error chunk when a committed stream stalls past the idle timeout", async () => {
      h.fakes.groq.script({ chunks: ["a ", "b"], failure: { kind: "stall-after", chunks: 1 } });
      const res = await h.stream({ model: "test/multi", messages: userMessage(), stream: true });
      const last = res.chunks[res.chunks.length - 1];
      expect(last.choices[0].finish_reason).toBe("error");
      expect(h.fakes.openai.requests).toHaveLength(0);
    });

    it.each([
      ["an OpenAI-compatible", "test/multi", "groq"],
      ["an Anthropic", "test/claude", "anthropic"],
    ] as const)("completes %s stream whose finish reason came but whose end marker never did", async (_what, model, slug) => {
      h.fakes[slug].script({ chunks: ["all ", "here"], usage: { prompt: 5, completion: 2 }, failure: { kind: "stall-before-end" } });
      const res = await h.stream({ model, messages: userMessage(), stream: true });
      expect(streamedText(res.chunks)).toBe("all here");
      const last = res.chunks[res.chunks.length - 1];
      expect(last.error).toBeUndefined();
      expect(last.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2 });
      expect(res.done).toBe(true);
      const event = await h.eventFor(last.id);
      expect(event).toMatchObject({ status: "complete", finishReason: "stop" });
      expect(event.attempts[0]).toMatchObject({ status: "ok", errorCode: "" });
    });

    it("reports an in-stream provider error after content as the stream's error", async () => {
      h.fakes.anthropic.script({ chunks: ["Hello ", "there"], failure: { kind: "stream-error", chunks: 1, code: "overloaded_error", message: PROVIDER_WORDS } });
      const res = await h.stream({ model: "test/claude", messages: userMessage(), stream: true });
      const last = res.chunks[res.chunks.length - 1];
      expect(last.error.message).toContain(PROVIDER_WORDS);
      const event = await h.eventFor(last.id);
      expect(event.attempts[0]).toMatchObject({ status: "ok", errorCode: "overloaded_error" });
      expect(event.attempts[0]!.errorMessage).not.toContain("secret");
    });

    it("answers inside the stream when every endpoint fails", async () => {
      h.fakes.groq.script({ failure: { kind: "status", status: 502 } });
      h.fakes.openai.script({ failure: { kind: "status", status: 500 } });
      const res = await h.stream({ model: "test/multi", messages: userMessage(), stream: true }, { headers: { "X-Router-Metadata": "enabled" } });
      expect(res.status).toBe(200);
      expect(res.chunks).toHaveLength(1);
      expect(res.chunks[0]).toMatchObject({
        error: { status: 502, code: "upstream_error" },
        choices: [{ finish_reason: "error" }],
        router_metadata: { served: null },
      });
      expect(res.done).toBe(true);
    });
  });
});

describe("circuit breakers", () => {
  let h: ChatHarness;
  beforeAll(async () => {
    h = await startChatHarness({ dispatcher: { breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 } } });
  });
  afterAll(() => h.close());

  it("skips an endpoint whose breaker opened after repeated 5xx", async () => {
    h.fakes.groq.setDefault({ failure: { kind: "status", status: 500 } });
    for (let i = 0; i < 2; i++) expect((await h.post({ model: "test/multi", messages: userMessage() })).body.provider).toBe("openai");
    expect(h.fakes.groq.requests).toHaveLength(2);

    const res = await h.post({ model: "test/multi", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(res.body.provider).toBe("openai");
    expect(h.fakes.groq.requests).toHaveLength(2);
    expect(res.body.router_metadata.skipped).toEqual([{ model: "test/multi", provider: "groq", endpoint_id: "ep_groq_multi", reason: "circuit_open" }]);
    expect(res.body.router_metadata.attempts).toMatchObject([{ attempt: 2, provider: "openai" }]);
  });

  it("does not count a provider's 4xx against the endpoint", async () => {
    h.fakes.mistral.setDefault({ failure: { kind: "status", status: 400 } });
    for (let i = 0; i < 4; i++) await h.post({ model: "test/spare", messages: userMessage() });
    expect(h.fakes.mistral.requests).toHaveLength(4);
    expect(h.dispatcher.breakers.isOpen("ep_mistral_spare")).toBe(false);
  });

  it("tries an open endpoint anyway when nothing else is left, and a success closes its circuit", async () => {
    h.fakes.openai.setDefault({ failure: { kind: "status", status: 500 } });
    for (let i = 0; i < 2; i++) await h.post({ model: "test/gpt", messages: userMessage() });
    expect(h.dispatcher.breakers.isOpen("ep_openai_gpt")).toBe(true);

    // Still failing: tried once more, recorded as dispatched through an open circuit.
    const before = h.fakes.openai.requests.length;
    const failing = await h.post({ model: "test/gpt", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(failing.status).toBe(502);
    expect(h.fakes.openai.requests).toHaveLength(before + 1);

    // Recovered: the request is served and the circuit closes, so the next one goes the usual way.
    h.fakes.openai.setDefault({});
    const res = await h.post({ model: "test/gpt", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(200);
    expect(res.body.router_metadata.attempts).toMatchObject([{ provider: "openai", status: "ok", circuit_open: true }]);
    expect(res.body.router_metadata.skipped).toEqual([]);
    expect(h.dispatcher.breakers.isOpen("ep_openai_gpt")).toBe(false);
    const next = await h.post({ model: "test/gpt", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(next.body.router_metadata.attempts).toMatchObject([{ provider: "openai", circuit_open: false }]);
  });

  it("tries open endpoints only after every closed one has failed", async () => {
    // groq's circuit is open from the first test; openai now fails: groq is tried last, and serves.
    h.fakes.groq.setDefault({});
    h.fakes.openai.setDefault({ failure: { kind: "status", status: 503 } });
    const res = await h.post({ model: "test/multi", messages: userMessage() }, { headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("groq");
    expect(res.body.router_metadata.attempts).toMatchObject([
      { provider: "openai", status: "error", circuit_open: false },
      { provider: "groq", status: "ok", circuit_open: true },
    ]);
    h.fakes.openai.setDefault({});
  });
});
