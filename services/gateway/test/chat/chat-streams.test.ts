import { parseEventStream, streamedText, waitFor } from "@router/testkit";
import { DEFAULT_TOKEN, startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({ keepaliveMs: 40 });
});
afterAll(() => h.close());
beforeEach(() => {
  for (const f of Object.values(h.fakes)) f.reset();
});

/** Opens a stream and hands back a reader of its text as it arrives. */
async function openStream(body: unknown, signal: AbortSignal) {
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${DEFAULT_TOKEN}` },
    body: JSON.stringify(body),
    signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    res,
    /** Reads until `predicate(text so far)` holds. */
    async until(predicate: (text: string) => boolean): Promise<string> {
      while (!predicate(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before the condition held:\n${text}`);
        text += decoder.decode(value, { stream: true });
      }
      return text;
    },
  };
}

describe("streamed chat completions", () => {
  it("sends headers with a keepalive comment first, forwards chunks, then usage and [DONE]", async () => {
    h.fakes.openai.script({ chunks: ["Hel", "lo ", "world"], usage: { prompt: 11, completion: 3 } });
    const res = await h.stream({ model: "test/gpt", messages: userMessage(), stream: true });

    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.text.startsWith(": router processing\n\n")).toBe(true);
    expect(res.done).toBe(true);
    expect(res.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(streamedText(res.chunks)).toBe("Hello world");
    const id = res.chunks[0].id;
    expect(id).toMatch(/^gen-/);
    for (const c of res.chunks) {
      expect(c).toMatchObject({ id, object: "chat.completion.chunk", model: "test/gpt", provider: "openai" });
    }
    expect(res.chunks[0].choices[0].delta.role).toBe("assistant");
    const finish = res.chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish.choices[0]).toMatchObject({ finish_reason: "stop", native_finish_reason: "stop" });
    const last = res.chunks[res.chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });

    expect(h.fakes.openai.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    await expect(h.eventFor(id)).resolves.toMatchObject({ status: "complete", streamed: true, finishReason: "stop" });
  });

  it("streams Anthropic thinking as delta.reasoning and tool_use as tool-call deltas", async () => {
    h.fakes.anthropic.script({ reasoning: "Need the tool.", text: "Checking.", toolCalls: [{ id: "toolu_1", name: "lookup", arguments: { q: "x" } }] });
    const res = await h.stream({
      model: "test/claude",
      messages: userMessage(),
      stream: true,
      tools: [{ type: "function", function: { name: "lookup" } }],
    });
    const reasoning = res.chunks.map((c) => c.choices?.[0]?.delta?.reasoning ?? "").join("");
    expect(reasoning).toBe("Need the tool.");
    expect(streamedText(res.chunks)).toBe("Checking.");
    const toolDeltas = res.chunks.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ index: 0, id: "toolu_1", type: "function", function: { name: "lookup" } });
    expect(toolDeltas.map((t: any) => t.function?.arguments ?? "").join("")).toBe('{"q":"x"}');
    expect(res.chunks.find((c) => c.choices?.[0]?.finish_reason)?.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      native_finish_reason: "tool_use",
    });
    expect(res.done).toBe(true);
    // The argument pieces are joined before they are judged.
    await expect(h.eventFor(res.chunks[0].id)).resolves.toMatchObject({ toolCalls: 1, invalidToolCalls: 0 });
  });

  it("streams Gemini with usage on the final chunk", async () => {
    h.fakes.google.script({ text: "Blue sky", usage: { prompt: 7, completion: 4, reasoning: 2 } });
    const res = await h.stream({ model: "test/gemini", messages: userMessage(), stream: true });
    expect(streamedText(res.chunks)).toBe("Blue sky");
    expect(h.fakes.google.requests[0]!.path).toBe("/v1beta/models/google-gemini-upstream:streamGenerateContent");
    expect(h.fakes.google.requests[0]!.query).toEqual({ alt: "sse" });
    expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 4,
      completion_tokens_details: { reasoning_tokens: 2 },
    });
  });

  it("sends keepalive comments while the provider has not answered yet", async () => {
    h.fakes.openai.script({ headersDelayMs: 300, text: "late" });
    const res = await h.stream({ model: "test/gpt", messages: userMessage(), stream: true });
    const beforeData = res.text.slice(0, res.text.indexOf("data:"));
    expect(beforeData.split(": router processing").length - 1).toBeGreaterThanOrEqual(3);
    expect(streamedText(res.chunks)).toBe("late");
  });

  it("adds router_metadata to the final chunk when asked", async () => {
    const res = await h.stream({ model: "test/gpt", messages: userMessage(), stream: true }, { headers: { "X-Metadata": "enabled" } });
    const meta = res.chunks[res.chunks.length - 1].router_metadata;
    expect(meta).toMatchObject({
      requested: "test/gpt",
      strategy: "direct",
      is_byok: true,
      served: { model: "test/gpt", provider: "openai", endpoint_id: "ep_openai_gpt" },
      pricing: { prompt_per_million: 2, completion_per_million: 8, cached_prompt_per_million: 1 },
      attempts: [{ attempt: 1, provider: "openai", status: "ok", http_status: 200 }],
    });
    expect(res.chunks.slice(0, -1).every((c) => c.router_metadata === undefined)).toBe(true);
  });

  it("forwards each chunk as it arrives, and a client disconnect aborts the upstream call and records cancelled", async () => {
    // The provider sends two chunks and then goes silent with the connection open.
    h.fakes.openai.script({ chunks: ["one ", "two ", "three"], failure: { kind: "stall-after", chunks: 2 } });
    const abort = new AbortController();
    const stream = await openStream({ model: "test/gpt", messages: userMessage(), stream: true }, abort.signal);
    const seen = await stream.until((t) => streamedText(parseEventStream(t).chunks) === "one two ");
    const id = parseEventStream(seen).chunks[0].id;

    abort.abort();
    await waitFor(() => h.fakes.openai.requests[0]?.clientClosed, { what: "the upstream call to be aborted" });
    const event = await h.eventFor(id);
    expect(event).toMatchObject({ status: "cancelled", cancelled: true, streamed: true, servedModel: "test/gpt" });
    // Usage seen so far: the provider reported none, so it is estimated from what was streamed.
    expect(event.usage?.completionTokens).toBe(2);
    expect(event.listCostNanodollars).toBeGreaterThan(0n);
  });

  it("counts at least what was streamed when a cancelled stream's provider reported usage only at its start", async () => {
    // Anthropic reports output tokens on message_start (1) and again only on message_delta, which a
    // cancelled stream never reaches.
    const pieces = [`${"a".repeat(40)} `, `${"b".repeat(40)} `, "c"];
    h.fakes.anthropic.script({ chunks: pieces, usage: { prompt: 11, completion: 50 }, failure: { kind: "stall-after", chunks: 2 } });
    const abort = new AbortController();
    const stream = await openStream({ model: "test/claude", messages: userMessage(), stream: true }, abort.signal);
    const seen = await stream.until((t) => streamedText(parseEventStream(t).chunks) === pieces[0]! + pieces[1]!);
    const id = parseEventStream(seen).chunks[0].id;

    abort.abort();
    const event = await h.eventFor(id);
    expect(event).toMatchObject({ status: "cancelled", cancelled: true, providerSlug: "anthropic" });
    expect(event.usage?.completionTokens).toBe(Math.ceil(82 / 4));
    expect(event.usage?.promptTokens).toBe(11);
  });

  it("keeps the provider's own count when a stream ends normally", async () => {
    h.fakes.anthropic.script({ text: "a long answer counted by the provider", usage: { prompt: 11, completion: 3 } });
    const res = await h.stream({ model: "test/claude", messages: userMessage(), stream: true });
    expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3 });
  });

  it("estimates usage on the final chunk when the provider streams none", async () => {
    h.fakes.openai.script({ text: "abcdefgh", usage: null });
    const res = await h.stream({ model: "test/gpt", messages: userMessage(), stream: true });
    expect(res.chunks[res.chunks.length - 1].usage.completion_tokens).toBe(2);
  });
});
