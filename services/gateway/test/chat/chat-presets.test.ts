import { startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

/**
 * A chat request naming `@preset/<slug>`: routing resolves the preset, the gateway fills in its
 * sampling settings where the request sets none, and a removed preset is a 404.
 */
let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(() => h.close());
beforeEach(() => {
  for (const f of Object.values(h.fakes)) f.reset();
});

const createPreset = async (slug: string, body: Record<string, unknown>) => {
  const res = await h.manageRouting("POST", "/v1/presets", { slug, name: slug, body });
  expect(res.status).toBe(201);
  return res;
};

describe("a request naming a preset", () => {
  it("routes to the preset's model and sends its settings, the request's own fields winning", async () => {
    await createPreset("tuned", { model: "test/gpt", temperature: 0.3, top_p: 0.8, max_tokens: 77, seed: 11, messages: [] });

    const res = await h.post(
      { model: "@preset/tuned", messages: userMessage("Hi"), top_p: 0.5 },
      { headers: { "X-Router-Metadata": "enabled" } },
    );

    expect(res.status).toBe(200);
    expect(res.body.model).toBe("test/gpt");
    const upstream = h.fakes.openai.requests.at(-1)?.body as Record<string, unknown>;
    expect(upstream).toMatchObject({ temperature: 0.3, top_p: 0.5, seed: 11 });
    expect(upstream.max_tokens ?? upstream.max_completion_tokens).toBe(77);
    expect(res.body.router_metadata).toMatchObject({ requested: "@preset/tuned", preset: { reference: "@preset/tuned", version: 1 } });
    const event = await h.eventFor(res.body.id);
    expect(event.requestedModel).toBe("@preset/tuned");
    expect(event.servedModel).toBe("test/gpt");
  });

  it("uses a pinned version", async () => {
    await createPreset("moving", { model: "test/gpt" });
    expect((await h.manageRouting("POST", "/v1/presets/moving/versions", { body: { model: "test/claude" } })).status).toBe(201);

    expect((await h.post({ model: "@preset/moving", messages: userMessage() })).body.model).toBe("test/claude");
    expect((await h.post({ model: "@preset/moving@1", messages: userMessage() })).body.model).toBe("test/gpt");
  });

  it("gets 404 once the preset is deleted, and asks no provider", async () => {
    await createPreset("doomed", { model: "test/gpt" });
    expect((await h.post({ model: "@preset/doomed", messages: userMessage() })).status).toBe(200);
    const calls = h.upstreamCalls();

    expect((await h.manageRouting("DELETE", "/v1/presets/doomed")).status).toBe(200);
    const res = await h.post({ model: "@preset/doomed", messages: userMessage() });

    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ status: 404, code: "model_not_found" });
    expect(res.body.error.message).toContain("@preset/doomed");
    expect(h.upstreamCalls()).toBe(calls);
    expect((await h.post({ model: "@preset/doomed@1", messages: userMessage() })).status).toBe(404);
  });
});
