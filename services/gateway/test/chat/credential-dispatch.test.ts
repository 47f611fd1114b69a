import { uniqueName } from "@router/testkit";
import { startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

const FAST_FAIL = { timeouts: { headersMs: 400, streamHeadersMs: 400, idleMs: 400 }, breaker: { volumeThreshold: 1_000 } };

/** Several credentials for one provider: tiers, priorities and fallback policies in dispatch order. */
describe("dispatch over the organisation's credentials", () => {
  let h: ChatHarness;
  beforeAll(async () => {
    h = await startChatHarness({ dispatcher: FAST_FAIL });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    for (const f of Object.values(h.fakes)) f.reset();
  });

  const orgWith = (creds: Parameters<ChatHarness["setCredentials"]>[1]) => {
    const org = uniqueName("org");
    const token = `rt-v1-${uniqueName("tok")}`;
    h.setCredentials(org, creds);
    h.addKey(token, {}, org);
    return token;
  };

  it("tries the same endpoint with the next credential when the first one is rate limited", async () => {
    const token = orgWith([
      { providerSlug: "openai", apiKey: "sk-openai-team", tier: "prioritized" },
      { providerSlug: "openai", apiKey: "sk-openai-spare", tier: "fallback" },
    ]);
    h.fakes.openai.script({ failure: { kind: "status", status: 429 } }, { text: "served by the spare key" });
    const res = await h.post({ model: "test/gpt", messages: userMessage() }, { token, headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe("served by the spare key");
    expect(h.fakes.openai.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-openai-team", "Bearer sk-openai-spare"]);
    const event = await h.eventFor(res.body.id);
    expect(event.attempts.map((a) => [a.attempt, a.endpointId, a.status, a.httpStatus])).toEqual([
      [1, "ep_openai_gpt", "error", 429],
      [2, "ep_openai_gpt", "ok", 200],
    ]);
  });

  it("moves to the next endpoint rather than the same endpoint's other credential when the endpoint itself fails", async () => {
    const token = orgWith([
      { providerSlug: "groq", apiKey: "sk-groq-a" },
      { providerSlug: "groq", apiKey: "sk-groq-b" },
      { providerSlug: "openai", apiKey: "sk-openai-c" },
    ]);
    h.fakes.groq.script({ failure: { kind: "status", status: 503 } });
    const res = await h.post({ model: "test/multi", messages: userMessage() }, { token });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("openai");
    expect(h.fakes.groq.requests).toHaveLength(1);
  });

  it("keeps away from the provider after a failure when the credential's policy is none_for_provider", async () => {
    const token = orgWith([
      { providerSlug: "groq", apiKey: "sk-groq-a", fallbackPolicy: "none_for_provider" },
      { providerSlug: "groq", apiKey: "sk-groq-b" },
      { providerSlug: "openai", apiKey: "sk-openai-c" },
    ]);
    h.fakes.groq.script({ failure: { kind: "status", status: 429 } });
    const res = await h.post({ model: "test/multi", messages: userMessage() }, { token, headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe("openai");
    expect(h.fakes.groq.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-groq-a"]);
    expect(res.body.router_metadata.skipped).toEqual(
      expect.arrayContaining([expect.objectContaining({ provider: "groq", reason: "fallback_policy" })]),
    );
  });

  it("does not fall back to another model after a failure when the credential's policy is none_for_models", async () => {
    const token = orgWith([
      { providerSlug: "groq", apiKey: "sk-groq-a", fallbackPolicy: "none_for_models" },
      { providerSlug: "mistral", apiKey: "sk-mistral-b" },
    ]);
    h.fakes.groq.script({ failure: { kind: "status", status: 500 } });
    const res = await h.post({ model: "test/fast", models: ["test/spare"], messages: userMessage() }, { token });
    expect(res.status).toBe(502);
    expect(h.fakes.mistral.requests).toHaveLength(0);
  });

  it("falls back to another model after the same failure under the default policy", async () => {
    const token = orgWith([
      { providerSlug: "groq", apiKey: "sk-groq-a" },
      { providerSlug: "mistral", apiKey: "sk-mistral-b" },
    ]);
    h.fakes.groq.script({ failure: { kind: "status", status: 500 } });
    const res = await h.post({ model: "test/fast", models: ["test/spare"], messages: userMessage() }, { token });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe("test/spare");
  });
});
