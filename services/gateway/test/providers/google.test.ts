import { routing } from "@router/proto";
import { completionTokenBound } from "../../src/spend/worst-case";
import { adapterFor } from "@router/providers";
import { UnsupportedRequest } from "@router/providers";
import { bodyOf, chat, collect, decodeStream, sample, sampleJson, target, thrown } from "./wire-samples";

const google = adapterFor("google", "google")!;
const googleTarget = (o = {}) =>
  target({ providerSlug: "google", baseUrl: "https://generativelanguage.googleapis.com/v1beta", upstreamModel: "gemini-2.5-flash", ...o });
const generationConfig = (body: Record<string, unknown>, o = {}) => bodyOf(google.buildRequest(chat(body), googleTarget(o), false)).generationConfig;

describe("Gemini request", () => {
  it("calls generateContent and streamGenerateContent with alt=sse and the key header", () => {
    const plain = google.buildRequest(chat({}), googleTarget(), false);
    expect(plain.url.toString()).toBe("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent");
    expect(plain.headers["x-goog-api-key"]).toBe("sk-test-123");
    const streamed = google.buildRequest(chat({}), googleTarget({ baseUrl: "http://127.0.0.1:5555" }), true);
    expect(streamed.url.toString()).toBe("http://127.0.0.1:5555/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  });

  it("maps messages to contents with a system instruction and model turns", () => {
    const body = bodyOf(
      google.buildRequest(
        chat({
          messages: [
            { role: "system", content: "Be kind." },
            { role: "user", content: [{ type: "text", text: "Look" }, { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } }] },
            { role: "assistant", content: "A photo." },
            { role: "user", content: "Of what?" },
          ],
        }),
        googleTarget(),
        false,
      ),
    );
    expect(body.systemInstruction).toEqual({ parts: [{ text: "Be kind." }] });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "Look" }, { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } }] },
      { role: "model", parts: [{ text: "A photo." }] },
      { role: "user", parts: [{ text: "Of what?" }] },
    ]);
  });

  it("maps generation settings, JSON output and reasoning", () => {
    const body = bodyOf(
      google.buildRequest(
        chat({
          max_tokens: 256,
          temperature: 0.2,
          top_p: 0.7,
          top_k: 20,
          seed: 42,
          stop: ["\n\n"],
          response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
          reasoning: { max_tokens: 500 },
        }),
        googleTarget(),
        false,
      ),
    );
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 256 + 1024,
      temperature: 0.2,
      topP: 0.7,
      topK: 20,
      seed: 42,
      stopSequences: ["\n\n"],
      responseMimeType: "application/json",
      responseJsonSchema: { type: "object" },
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
  });

  it("maps tools, tool choice, calls and responses (naming the function by its call id)", () => {
    const body = bodyOf(
      google.buildRequest(
        chat({
          messages: [
            { role: "user", content: "Book it" },
            { role: "assistant", tool_calls: [{ id: "call_7", type: "function", function: { name: "book", arguments: '{"day":"mon"}' } }] },
            { role: "tool", tool_call_id: "call_7", content: "booked" },
          ],
          tools: [{ type: "function", function: { name: "book", parameters: { type: "object", additionalProperties: false } } }],
          tool_choice: { type: "function", function: { name: "book" } },
        }),
        googleTarget(),
        false,
      ),
    );
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: "book", parametersJsonSchema: { type: "object", additionalProperties: false } }] }]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["book"] } });
    expect(body.contents.slice(1)).toEqual([
      { role: "model", parts: [{ functionCall: { name: "book", args: { day: "mon" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "book", response: { content: "booked" } } }] },
    ]);
  });
  it("refuses tool-call arguments that are not a JSON object, naming the field", () => {
    for (const args of ["[1,2]", '"Paris"', "null"]) {
      const req = chat({
        messages: [
          { role: "user", content: "Weather?" },
          { role: "assistant", content: "Checking.", tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: args } }] },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
      });
      const err = thrown(() => google.buildRequest(req, googleTarget(), false));
      expect(err).toBeInstanceOf(UnsupportedRequest);
      expect(err).toMatchObject({ field: "messages.1.tool_calls.0.function.arguments" });
    }
  });

  it("refuses more than 5 stop sequences before sending and passes 5", () => {
    const stops = ["a", "b", "c", "d", "e"];
    const err = thrown(() => google.buildRequest(chat({ stop: [...stops, "f"] }), googleTarget(), false));
    expect(err).toBeInstanceOf(UnsupportedRequest);
    expect(err).toMatchObject({ field: "stop", message: "stop: google takes at most 5 stop sequences" });
    expect(generationConfig({ stop: stops }).stopSequences).toEqual(stops);
  });
});

describe("Gemini thinking", () => {
  it("adds the thinking budget on top of max_tokens, so the answer keeps its room", () => {
    expect(generationConfig({ max_tokens: 500, reasoning: { effort: "high" } })).toEqual({
      maxOutputTokens: 500 + 1024,
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
    expect(generationConfig({ max_tokens: 10_000, reasoning: { effort: "medium" } }, { maxOutputTokens: 65_536 })).toEqual({
      maxOutputTokens: 15_000,
      thinkingConfig: { thinkingBudget: 5000, includeThoughts: true },
    });
  });

  it("caps maxOutputTokens at the endpoint's max output, and not at all when that is unknown", () => {
    expect(generationConfig({ max_tokens: 6000, reasoning: { max_tokens: 4000 } }, { maxOutputTokens: 8192 }).maxOutputTokens).toBe(8192);
    expect(generationConfig({ max_tokens: 6000, reasoning: { max_tokens: 4000 } }, { maxOutputTokens: 0 }).maxOutputTokens).toBe(10_000);
    expect(generationConfig({ max_tokens: 9000 }, { maxOutputTokens: 8192 }).maxOutputTokens).toBe(8192);
  });

  it("leaves Flash's default thinking inside max_tokens, which is what the hold reserves", () => {
    // Gemini counts thoughts against maxOutputTokens, so an unasked-for thought cannot exceed it.
    const req = chat({ max_tokens: 300 });
    expect(bodyOf(google.buildRequest(req, googleTarget(), false)).generationConfig).toEqual({ maxOutputTokens: 300 });
    expect(completionTokenBound(req, routing.Candidate.fromPartial({ providerSlug: "google", maxOutputTokens: 65_536 }))).toBe(300);
  });

  it("caps the thinking budget at 24576 on Flash and 32768 on Pro", () => {
    const wanted = { max_tokens: 1000, reasoning: { max_tokens: 50_000 } };
    expect(generationConfig(wanted, { maxOutputTokens: 0 }).thinkingConfig.thinkingBudget).toBe(24_576);
    expect(generationConfig(wanted, { maxOutputTokens: 0, upstreamModel: "gemini-2.5-pro" }).thinkingConfig.thinkingBudget).toBe(32_768);
  });

  it("takes an effort as a share of the largest budget when no max_tokens bounds the answer", () => {
    expect(generationConfig({ reasoning: { effort: "high" } })).toEqual({ thinkingConfig: { thinkingBudget: 19_660, includeThoughts: true } });
  });

  it("turns thinking off on Flash when reasoning is disabled, and sends nothing to Pro, which cannot stop thinking", () => {
    expect(generationConfig({ reasoning: { enabled: false } })).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(bodyOf(google.buildRequest(chat({ reasoning: { enabled: false } }), googleTarget({ upstreamModel: "gemini-2.5-pro" }), false))).not.toHaveProperty(
      "generationConfig",
    );
  });

  it("asks for no thought text when reasoning is excluded", () => {
    expect(generationConfig({ max_tokens: 100, reasoning: { effort: "low", exclude: true } }).thinkingConfig).toEqual({
      thinkingBudget: 1024,
      includeThoughts: false,
    });
  });

  it("sends no thinking settings when the request asks nothing of reasoning", () => {
    expect(generationConfig({ max_tokens: 100 })).toEqual({ maxOutputTokens: 100 });
  });
});

describe("Gemini response", () => {
  it("returns thought parts as reasoning and counts thoughts as completion tokens", () => {
    const c = google.parseCompletion(sampleJson("gemini-response.json"));
    expect(c.choices[0]).toEqual({
      index: 0,
      message: { role: "assistant", content: "9.8 is larger than 9.11.", reasoning: "**Comparing numbers**\n\nI compare the decimal parts." },
      finish_reason: "stop",
      native_finish_reason: "STOP",
    });
    expect(c.usage).toEqual({ prompt: 11, completion: 299, cached: 4, reasoning: 290 });
  });

  it("turns function calls into tool calls with a tool_calls finish", () => {
    const c = google.parseCompletion(sampleJson("gemini-function-call.json"));
    expect(c.choices[0]?.finish_reason).toBe("tool_calls");
    expect(c.choices[0]?.message.tool_calls?.[0]).toEqual({
      id: "call_0",
      type: "function",
      function: { name: "schedule_meeting", arguments: '{"attendees":["Bob","Alice"],"date":"2025-03-27","topic":"Q3 planning"}' },
    });
  });

  it("reports a blocked prompt as a content filter finish", () => {
    const c = google.parseCompletion(sampleJson("gemini-blocked.json"));
    expect(c.choices[0]).toMatchObject({ finish_reason: "content_filter", native_finish_reason: "PROHIBITED_CONTENT", message: { content: null } });
  });

  it.each([
    ["STOP", "stop"],
    ["MAX_TOKENS", "length"],
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["BLOCKLIST", "content_filter"],
    ["PROHIBITED_CONTENT", "content_filter"],
    ["SPII", "content_filter"],
    ["IMAGE_SAFETY", "content_filter"],
    ["IMAGE_PROHIBITED_CONTENT", "content_filter"],
    ["IMAGE_RECITATION", "content_filter"],
    ["MALFORMED_FUNCTION_CALL", "error"],
    ["UNEXPECTED_TOOL_CALL", "error"],
    ["TOO_MANY_TOOL_CALLS", "error"],
    ["LANGUAGE", "error"],
    ["OTHER", "error"],
    ["IMAGE_OTHER", "error"],
    ["A_REASON_ADDED_LATER", "error"],
  ])("maps finish reason %s to %s and keeps Gemini's own", (native, normalized) => {
    const c = google.parseCompletion({ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: native }] });
    expect(c.choices[0]).toMatchObject({ finish_reason: normalized, native_finish_reason: native });
  });

  it("reads the error status as the provider's code", () => {
    expect(google.parseError(sample("gemini-error-400.json"))).toEqual({ code: "INVALID_ARGUMENT", message: "API key not valid. Please pass a valid API key." });
  });
});

describe("Gemini stream", () => {
  it("streams text and ends with the finish reason and final usage", async () => {
    const events = await decodeStream(google, sample("gemini-stream.sse"), 17);
    const got = collect(events);
    expect(got.content).toBe("The sky is blue because of Rayleigh scattering.");
    expect(got.finishes).toEqual([{ finish: "length", native: "MAX_TOKENS" }]);
    expect(got.usage).toEqual({ prompt: 8, completion: 12, cached: 0, reasoning: 0 });
    const chunks = events.filter((e) => e.type === "chunk");
    expect(chunks.map((c) => c.type === "chunk" && c.content)).toEqual([true, true, false]);
  });

  it("streams thought parts as delta.reasoning, apart from the answer", async () => {
    const events = await decodeStream(google, sample("gemini-stream-thinking.sse"), 13);
    const got = collect(events);
    expect(got.reasoning).toBe("**Weighing the decimals**\n\nI line up the tenths: 9.8 has 8, 9.11 has 1.");
    expect(got.content).toBe("9.8 is larger than 9.11.");
    expect(got.finishes).toEqual([{ finish: "stop", native: "STOP" }]);
    expect(got.usage).toEqual({ prompt: 11, completion: 145, cached: 0, reasoning: 136 });
  });

  it("turns function calls of several chunks into tool-call deltas with one index each and a tool_calls finish", async () => {
    const events = await decodeStream(google, sample("gemini-stream-function-calls.sse"), 11);
    const calls = events.flatMap((e) => (e.type === "chunk" ? e.choices.flatMap((c) => c.delta.tool_calls ?? []) : []));
    expect(calls).toEqual([
      { index: 0, id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } },
      { index: 1, id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location":"London"}' } },
    ]);
    expect(collect(events).finishes).toEqual([{ finish: "tool_calls", native: "STOP" }]);
    expect(events[events.length - 1]).toEqual({ type: "done" });
  });

  it("ends a stream whose prompt was blocked with a content_filter finish and no content", async () => {
    const events = await decodeStream(google, sample("gemini-stream-blocked.sse"));
    const chunks = events.filter((e) => e.type === "chunk");
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ content: false, choices: [{ finish_reason: "content_filter", native_finish_reason: "PROHIBITED_CONTENT" }] });
    expect(collect(events).usage).toEqual({ prompt: 9, completion: 0, cached: 0, reasoning: 0 });
    expect(events[events.length - 1]).toEqual({ type: "done" });
  });
});
