import { costOfTokens, fromUsd } from "@router/money";
import { waitFor } from "@router/testkit";
import { startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(() => h.close());
beforeEach(() => {
  for (const f of Object.values(h.fakes)) f.reset();
});

describe("non-stream chat completions", () => {
  it("serves an OpenAI-compatible completion on the organisation's own credential, at the gateway's base URL override", async () => {
    h.fakes.openai.script({ text: "Hi there!", usage: { prompt: 20, completion: 5, cached: 4 } });
    const res = await h.post({ model: "test/gpt", messages: userMessage() });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: "chat.completion",
      model: "test/gpt",
      provider: "openai",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi there!" }, finish_reason: "stop", native_finish_reason: "stop" }],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 4 } },
    });
    expect(res.body.id).toMatch(/^gen-[0-9a-f]{32}$/);
    expect(typeof res.body.created).toBe("number");
    expect(res.body.router_metadata).toBeUndefined();

    const sent = h.fakes.openai.requests[0]!;
    expect(sent.headers.authorization).toBe("Bearer sk-openai-org-key");
    expect(sent.body).toMatchObject({ model: "openai-gpt-upstream", messages: [{ role: "user", content: "Hello" }] });
  });

  it("serves Anthropic with reasoning, the key header and the vendor beta header", async () => {
    h.fakes.anthropic.script({ text: "Bonjour", reasoning: "Greet in French.", usage: { prompt: 30, completion: 12 } });
    const res = await h.post(
      { model: "test/claude", messages: [{ role: "system", content: "French only" }, ...userMessage()], reasoning: { effort: "low" }, temperature: 0.4 },
      { headers: { "X-Vendor-Beta": "interleaved-thinking-2025-05-14" } },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      model: "test/claude",
      provider: "anthropic",
      choices: [{ message: { content: "Bonjour", reasoning: "Greet in French." }, finish_reason: "stop", native_finish_reason: "end_turn" }],
      usage: { prompt_tokens: 30, completion_tokens: 12 },
    });
    const sent = h.fakes.anthropic.requests[0]!;
    expect(sent.headers["x-api-key"]).toBe("sk-anthropic-org-key");
    expect(sent.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
    expect(sent.body).toMatchObject({ model: "anthropic-claude-upstream", system: "French only", thinking: { type: "enabled", budget_tokens: 1024 } });
    expect((sent.body as Record<string, unknown>).temperature).toBeUndefined();
  });

  it("does not forward X-Vendor-Beta to a provider it does not concern", async () => {
    await h.post({ model: "test/gpt", messages: userMessage() }, { headers: { "X-Vendor-Beta": "some-beta" } });
    expect(JSON.stringify(h.fakes.openai.requests[0]!.headers)).not.toContain("some-beta");
  });

  it("serves Gemini tool calls as OpenAI tool calls", async () => {
    h.fakes.google.script({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] });
    const res = await h.post({
      model: "test/gemini",
      messages: userMessage("Weather?"),
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    });
    expect(res.status).toBe(200);
    expect(res.body.choices[0]).toMatchObject({
      message: { content: null, tool_calls: [{ type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
      finish_reason: "tool_calls",
      native_finish_reason: "STOP",
    });
    expect(h.fakes.google.requests[0]!.headers["x-goog-api-key"]).toBe("sk-google-org-key");
    expect(h.fakes.google.requests[0]!.path).toBe("/v1beta/models/google-gemini-upstream:generateContent");
    // Counted for routing's tool-call reliability: one call, with JSON-object arguments.
    await expect(h.eventFor(res.body.id)).resolves.toMatchObject({ toolCalls: 1, invalidToolCalls: 0 });
  });

  it("omits reasoning when the request asks to exclude it", async () => {
    h.fakes.anthropic.script({ text: "42", reasoning: "secret thoughts" });
    const res = await h.post({ model: "test/claude", messages: userMessage(), reasoning: { max_tokens: 2000, exclude: true } });
    expect(res.body.choices[0].message.reasoning).toBeUndefined();
    expect(res.body.choices[0].message.reasoning_details).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain("secret thoughts");
    expect(h.fakes.anthropic.requests[0]!.body).toMatchObject({ thinking: { budget_tokens: 2000 } });
  });

  it("records the request and settles its list cost on the key's ceiling after responding", async () => {
    const caller = h.addKey("rt-v1-settle", { limitNanos: fromUsd(10) });
    // The provider takes at least 40 ms to answer: time to first token includes it, overhead does not.
    const providerMs = 40;
    h.fakes.openai.script({ usage: { prompt: 1000, completion: 500, cached: 200 }, headersDelayMs: providerMs });
    const res = await h.post({ model: "test/gpt", messages: userMessage() }, { token: "rt-v1-settle" });
    expect(res.status).toBe(200);

    // test/gpt: prompt $2/M, cached $1/M, completion $8/M; each line rounded up.
    const expected = costOfTokens(800, fromUsd(2)) + costOfTokens(200, fromUsd(1)) + costOfTokens(500, fromUsd(8));
    const event = await h.eventFor(res.body.id);
    expect(event).toMatchObject({
      status: "complete",
      servedModel: "test/gpt",
      providerSlug: "openai",
      endpointId: "ep_openai_gpt",
      keyHash: caller.key.hash,
      workspaceId: "ws_test",
      workspaceName: "Test workspace",
      isByok: true,
      isCacheHit: true,
      streamed: false,
      finishReason: "stop",
      listCostNanodollars: expected,
      billedCostNanodollars: 0n,
      usage: { promptTokens: 1000, completionTokens: 500, cachedTokens: 200, reasoningTokens: 0 },
    });
    expect(event.usageLines.map((l) => [l.kind, l.tokens])).toEqual([
      ["prompt", 800],
      ["cached_prompt", 200],
      ["completion", 500],
    ]);
    expect(event.attempts).toHaveLength(1);
    expect(event.attempts[0]).toMatchObject({ attempt: 1, status: "ok", httpStatus: 200, providerSlug: "openai", errorCode: "" });
    // The hold Admit placed is named, so the ledger settles it without a lookup.
    expect(event.holdId).toMatch(/^hold_/);
    // A timer may fire up to a millisecond early against the monotonic clock, and both are rounded.
    const slack = 1;
    expect(event.ttftMs).toBeGreaterThanOrEqual(providerMs - slack);
    expect(event.routingOverheadMs).toBeGreaterThanOrEqual(0);
    expect(event.routingOverheadMs).toBeLessThanOrEqual(event.ttftMs! - providerMs + slack);
    await waitFor(async () => (await h.keyUsage(caller)) === expected, { what: "settlement" });
  });

  it("names no hold on the record of a request that no ceiling counted, nor of one routing refused", async () => {
    const served = await h.post({ model: "test/gpt", messages: userMessage() });
    expect(served.status).toBe(200);
    expect((await h.eventFor(served.body.id)).holdId).toBe("");

    // Admission answered (checked only, nothing held): the record says so, and the ledger looks nothing up.
    const refused = await h.post({ model: "nobody/none", messages: userMessage() });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const id = refused.headers.get("x-request-id") ?? "";
    expect((await h.eventFor(id)).holdId).toBe("");
  });

  it("leaves the hold unnamed when the ledger's admission failed, so the ledger looks it up", async () => {
    // Admit answers an error for a run that does not exist: whether a hold exists is not known here.
    const failed = await h.post({ model: "test/gpt", messages: userMessage(), run_id: "run_missing" });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const event = await h.eventFor(failed.headers.get("x-request-id") ?? "");
    expect(event.holdId).toBeUndefined();
  });

  it("aborts the upstream call when the client goes away while waiting, and records cancelled", async () => {
    h.fakes.openai.script({ failure: { kind: "hang" } });
    const abort = new AbortController();
    const pending = fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer rt-v1-test", "X-Router-Metadata": "enabled" },
      body: JSON.stringify({ model: "test/gpt", messages: userMessage() }),
      signal: abort.signal,
    }).catch(() => null);
    await waitFor(() => h.fakes.openai.requests.length === 1, { what: "the upstream call" });
    abort.abort();
    await pending;
    await waitFor(() => h.fakes.openai.requests[0]!.clientClosed, { what: "the upstream call to be aborted" });
    const event = await waitFor(() => [...h.events.values()].find((e) => e.status === "cancelled"), { what: "the cancelled record" });
    expect(event).toMatchObject({ cancelled: true, streamed: false, errorCode: "router.client_cancelled" });
    expect(event.attempts[0]).toMatchObject({ providerSlug: "openai", status: "error", errorCode: "router.client_cancelled" });
  });

  it("estimates usage from text when the provider reports none, so spend is still counted", async () => {
    h.fakes.openai.script({ text: "x".repeat(400), usage: null });
    const res = await h.post({ model: "test/gpt", messages: userMessage() });
    expect(res.body.usage.completion_tokens).toBe(100);
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);
  });
});

describe("the hold", () => {
  it("reserves the worst case at the cascade's most expensive endpoint while in flight, then settles the actual cost", async () => {
    const caller = h.addKey("rt-v1-hold", { limitNanos: fromUsd(100) });
    const messages = userMessage("How big is the hold?");
    h.fakes.groq.script({ headersDelayMs: 400, usage: { prompt: 10, completion: 10 } });
    const pending = h.post({ model: "test/multi", messages, max_tokens: 100 }, { token: "rt-v1-hold" });

    // test/multi: groq $0.5/$1 and openai $2/$8 per million; the hold prices the bound at openai.
    const promptBound = Buffer.byteLength(JSON.stringify(messages), "utf8");
    const worstCase = costOfTokens(promptBound, fromUsd(2)) + costOfTokens(100, fromUsd(8));
    await waitFor(async () => (await h.keyUsage(caller)) === worstCase, { what: "the in-flight hold" });

    const res = await pending;
    expect(res.body.provider).toBe("groq");
    const actual = costOfTokens(10, fromUsd(0.5)) + costOfTokens(10, fromUsd(1));
    await waitFor(async () => (await h.keyUsage(caller)) === actual, { what: "settlement" });
  });

  it("releases the hold when nothing was served", async () => {
    const caller = h.addKey("rt-v1-release", { limitNanos: fromUsd(100) });
    h.fakes.openai.script({ failure: { kind: "status", status: 400 } });
    const res = await h.post({ model: "test/gpt", messages: userMessage() }, { token: "rt-v1-release" });
    expect(res.status).toBe(400);
    await waitFor(async () => (await h.keyUsage(caller)) === 0n, { what: "release" });
  });
});
