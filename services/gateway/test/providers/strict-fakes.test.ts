import { startFakeGemini, startFakeOpenAi, type FakeUpstream } from "@router/testkit";
import { adapterFor } from "@router/providers";
import type { UpstreamHttpRequest } from "@router/providers";
import { chat, collect, decodeStream, target } from "./wire-samples";

/**
 * The adapters against fake providers that refuse what the real ones refuse: a request the real
 * API would answer with an error must fail here too, or the fakes would hide the bug.
 */

const mistral = adapterFor("openai", "mistral")!;
const openai = adapterFor("openai", "openai")!;
const google = adapterFor("google", "google")!;

const send = (r: UpstreamHttpRequest) => fetch(r.url, { method: "POST", headers: r.headers, body: r.body });

describe("a fake playing Mistral strictly", () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ flavour: "mistral" });
  });
  afterAll(() => fake.close());

  it("refuses stream_options with Mistral's 422, which the adapter reads", async () => {
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ model: "mistral-small-latest", messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(res.status).toBe(422);
    expect(mistral.parseError(await res.text())).toEqual({ code: "extra_forbidden", message: "Extra inputs are not permitted: body.stream_options" });
  });

  it("refuses the developer role and a name on a user message", async () => {
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "developer", content: "Terse." }, { role: "user", content: "Hi", name: "ana" }] }),
    });
    expect(res.status).toBe(422);
    expect(mistral.parseError(await res.text()).message).toContain("body.messages.1.user.name");
  });

  it("takes the Mistral adapter's stream request and reports usage on the finish chunk unasked", async () => {
    fake.script({ chunks: ["Bon", "jour"], usage: { prompt: 9, completion: 2 } });
    const req = chat({
      messages: [{ role: "developer", content: "French." }, { role: "user", content: "Hi", name: "ana" }],
      stream: true,
      seed: 4,
      user: "u-1",
      max_completion_tokens: 50,
    });
    const res = await send(mistral.buildRequest(req, target({ providerSlug: "mistral", baseUrl: fake.url, upstreamModel: "mistral-small-latest" }), true));
    expect(res.status).toBe(200);
    const got = collect(await decodeStream(mistral, await res.text()));
    expect(got.content).toBe("Bonjour");
    expect(got.usage).toEqual({ prompt: 9, completion: 2, cached: 0, reasoning: 0 });
  });
});

describe("the default OpenAI-compatible fake", () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(() => fake.close());

  it("still takes stream_options, the developer role and names, and reports usage when asked", async () => {
    const req = chat({ messages: [{ role: "developer", content: "Terse.", name: "policy" }, { role: "user", content: "Hi" }], stream: true });
    const res = await send(openai.buildRequest(req, target({ baseUrl: fake.url }), true));
    expect(res.status).toBe(200);
    expect(collect(await decodeStream(openai, await res.text())).usage).not.toBeNull();
  });
});

describe("the Gemini fake", () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeGemini();
  });
  afterAll(() => fake.close());

  it("answers streamGenerateContent without alt=sse with one JSON array, as the real API does", async () => {
    fake.script({ chunks: ["Hal", "lo"] });
    const res = await fetch(`${fake.url}/models/gemini-2.5-flash:streamGenerateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": "k", "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] }),
    });
    expect(res.headers.get("content-type")).toBe("application/json");
    const body: unknown = await res.json();
    expect(Array.isArray(body)).toBe(true);
    expect(body).toHaveLength(3);
    expect(body).toMatchObject([{ candidates: [{ content: { parts: [{ text: "Hal" }] } }] }, {}, { candidates: [{ finishReason: "STOP" }] }]);
  });

  it("streams server-sent events to the adapter's request, which asks for alt=sse", async () => {
    fake.script({ chunks: ["Hal", "lo"], reasoning: "Greet." });
    const res = await send(google.buildRequest(chat({ reasoning: { effort: "low" } }), target({ providerSlug: "google", baseUrl: fake.url, upstreamModel: "gemini-2.5-flash" }), true));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const got = collect(await decodeStream(google, await res.text()));
    expect(got).toMatchObject({ content: "Hallo", reasoning: "Greet." });
  });
});
