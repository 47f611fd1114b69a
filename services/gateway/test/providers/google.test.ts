import { adapterFor } from "../../src/providers/registry";
import { bodyOf, chat, collect, decodeStream, sample, sampleJson, target } from "./wire-samples";

const google = adapterFor("google", "google")!;
const googleTarget = (o = {}) =>
  target({ providerSlug: "google", baseUrl: "https://generativelanguage.googleapis.com/v1beta", upstreamModel: "gemini-2.5-flash", ...o });

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
      maxOutputTokens: 256,
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
    ["MAX_TOKENS", "length"],
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["MALFORMED_FUNCTION_CALL", "error"],
  ])("maps finish reason %s to %s", (native, normalized) => {
    const c = google.parseCompletion({ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: native }] });
    expect(c.choices[0]?.finish_reason).toBe(normalized);
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
});
