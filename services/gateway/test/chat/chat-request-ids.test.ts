import { startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

const GENERATION_ID = /^gen-[0-9a-f]{32}$/;

let h: ChatHarness;
beforeAll(async () => {
  // One counted failure in the window would open a circuit: a failure that is Router's must count none.
  h = await startChatHarness({ dispatcher: { breaker: { volumeThreshold: 1 } } });
});
afterAll(() => h.close());
beforeEach(() => {
  for (const f of Object.values(h.fakes)) f.reset();
  h.setCredentials(
    h.orgId,
    Object.keys(h.fakes).map((slug) => ({ providerSlug: slug, apiKey: `sk-${slug}-org-key` })),
  );
});

describe("x-request-id on the inference routes", () => {
  it("is the generation id of a whole answer", async () => {
    h.fakes.openai.script({ text: "hi" });
    const res = await h.post({ model: "test/gpt", messages: userMessage() });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(GENERATION_ID);
    expect(res.headers.get("x-request-id")).toBe(res.body.id);
  });

  it("is the generation id of a stream, sent with its headers", async () => {
    h.fakes.openai.script({ text: "streamed" });
    const res = await h.stream({ model: "test/gpt", messages: userMessage(), stream: true });
    expect(res.status).toBe(200);
    expect(res.done).toBe(true);
    expect(res.headers.get("x-request-id")).toMatch(GENERATION_ID);
    expect(res.chunks.map((c) => c.id)).toEqual(res.chunks.map(() => res.headers.get("x-request-id")));
  });

  it("is on a refusal and on a body the parser refuses, a fresh one each time", async () => {
    const unknownModel = await h.post({ model: "test/nothing", messages: userMessage() });
    const malformed = await h.post('{"model":');
    const unauthorised = await h.post({ model: "test/gpt", messages: userMessage() }, { token: "rt-v1-unknown" });
    expect([unknownModel.status, malformed.status, unauthorised.status]).toEqual([404, 400, 401]);
    const ids = [unknownModel, malformed, unauthorised].map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(GENERATION_ID);
    expect(new Set(ids).size).toBe(3);
  });

  it("is never the caller's own", async () => {
    h.fakes.openai.script({ text: "hi" });
    const res = await h.post({ model: "test/gpt", messages: userMessage() }, { headers: { "x-request-id": "gen-00000000000000000000000000000000" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe(res.body.id);
    expect(res.body.id).not.toBe("gen-00000000000000000000000000000000");
  });
});

describe("a request Router could not send", () => {
  // A credential whose value cannot be a header: the HTTP client refuses it before a byte leaves.
  // The endpoint (mistral's) serves nothing else in this file, so one counted failure would open its circuit.
  const unsendable = () => h.setCredentials(h.orgId, [{ providerSlug: "mistral", apiKey: "sk-mistral\nbroken" }]);

  it("is Router's 500, recorded as router.request_not_sent, with no call and no count against the endpoint", async () => {
    unsendable();
    for (let i = 0; i < 3; i++) {
      const res = await h.post({ model: "test/spare", messages: userMessage() });
      expect(res.status).toBe(500);
      expect(res.body.error).toMatchObject({ code: "internal", message: "the router could not send the request to mistral (UND_ERR_INVALID_ARG)" });
      // The failure's id names its record.
      const id = res.headers.get("x-request-id")!;
      expect(id).toMatch(GENERATION_ID);
      const event = await h.eventFor(id);
      expect(event.attempts.map((a) => [a.endpointId, a.status, a.errorCode])).toEqual([["ep_mistral_spare", "error", "router.request_not_sent"]]);
    }
    expect(h.fakes.mistral.requests).toHaveLength(0);
    expect(h.dispatcher.breakers.isOpen("ep_mistral_spare")).toBe(false);
  });

  it("ends a stream with Router's error, under the stream's id", async () => {
    unsendable();
    const res = await h.stream({ model: "test/spare", messages: userMessage(), stream: true });
    const id = res.headers.get("x-request-id")!;
    expect(id).toMatch(GENERATION_ID);
    expect(res.chunks.at(-1)).toMatchObject({ error: { code: "internal" } });
    const event = await h.eventFor(id);
    expect(event.attempts.map((a) => a.errorCode)).toEqual(["router.request_not_sent"]);
    expect(h.fakes.mistral.requests).toHaveLength(0);
    expect(h.dispatcher.breakers.isOpen("ep_mistral_spare")).toBe(false);
  });

  it("leaves circuits to what providers answer: one 5xx of an endpoint's own opens its circuit here", async () => {
    // The control for the threshold above, on an endpoint with no traffic before it.
    h.fakes.anthropic.script({ failure: { kind: "status", status: 500 } });
    const res = await h.post({ model: "test/claude", messages: userMessage() });
    expect(res.status).toBe(502);
    expect(h.fakes.anthropic.requests).toHaveLength(1);
    expect(h.dispatcher.breakers.isOpen("ep_anthropic_claude")).toBe(true);
  });
});
