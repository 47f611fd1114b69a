import { request as httpRequest } from "node:http";
import { fromUsd } from "@router/money";
import { badChatRequests, waitFor } from "@router/testkit";
import { DEFAULT_TOKEN, startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(() => h.close());
beforeEach(() => {
  for (const f of Object.values(h.fakes)) f.reset();
});

const ok = { model: "test/gpt", messages: userMessage() };

describe("bad input: a 400 naming the field, before anything is spent", () => {
  it.each(badChatRequests(ok))("%s", async (field, body) => {
    const res = await h.post(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
    expect(res.body.error.message.startsWith(`${field}:`)).toBe(true);
    expect(h.upstreamCalls()).toBe(0);
  });

  it("answers malformed JSON with a 400", async () => {
    const res = await h.post("{not json");
    expect(res.status).toBe(400);
  });

  // Runs after every bad request above: none of them was recorded as a request.
  it("left nothing behind: no recorded request", () => {
    expect(h.events.size).toBe(0);
  });

  it("takes top-level fields it does not know (SDKs send their own) and passes them on as written to an OpenAI-compatible provider", async () => {
    const res = await h.post({ ...ok, logprobs: false, metadata: { a: "b" }, store: false });
    expect(res.status).toBe(200);
    expect(h.fakes.openai.requests[0]!.body).toMatchObject({ logprobs: false, metadata: { a: "b" }, store: false });
  });

  it("serves a legacy prompt as one user message", async () => {
    const res = await h.post({ model: "test/gpt", prompt: "Say hi" });
    expect(res.status).toBe(200);
    expect(h.fakes.openai.requests[0]!.body).toMatchObject({ messages: [{ role: "user", content: "Say hi" }] });
  });
});

describe("request headers", () => {
  it.each(["-starts-with-dash", "has space", "x".repeat(65), "semi;colon"])(
    "refuses a malformed X-Router-Agent %j with 400 before anything is spent",
    async (agent) => {
      const caller = h.addKey(`rt-v1-agent-${agent.length}`, { limitNanos: fromUsd(5) });
      const res = await h.post(ok, { token: `rt-v1-agent-${agent.length}`, headers: { "X-Router-Agent": agent } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe("X-Router-Agent");
      expect(h.upstreamCalls()).toBe(0);
      expect(await h.keyUsage(caller)).toBe(0n);
    },
  );

  it("refuses more than two app categories", async () => {
    const res = await h.post(ok, { headers: { "X-App-Categories": "coding,chat,roleplay" } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("X-App-Categories");
  });

  it("refuses an unknown X-Router-Metadata value", async () => {
    const res = await h.post(ok, { headers: { "X-Router-Metadata": "maybe" } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("X-Router-Metadata");
  });

  it("records attribution: referer as scheme and host only, title, visibility, categories, agent and session", async () => {
    // (`run_id` makes a request a turn of a run the ledger must know: e2e/runs.e2e.test.ts.)
    const res = await h.post(
      ok,
      {
        headers: {
          "HTTP-Referer": "https://app.example.com/private/path?token=abc#frag",
          "X-App-Title": "My App",
          "X-App-Visibility": "hidden",
          "X-App-Categories": "coding, Chat",
          "X-Router-Agent": "planner:v2.1_a-b",
          "X-Session-Id": "sess-42",
          "User-Agent": "test-sdk/1.0",
        },
      },
    );
    expect(res.status).toBe(200);
    const event = await h.eventFor(res.body.id);
    expect(event).toMatchObject({
      httpReferer: "https://app.example.com",
      appTitle: "My App",
      appHidden: true,
      appCategories: ["coding", "chat"],
      agent: "planner:v2.1_a-b",
      sessionId: "sess-42",
      userAgent: "test-sdk/1.0",
      runId: "",
      keyClass: "inference",
    });
    expect(event.appId).toMatch(/^app_[0-9a-f]{20}$/);
  });

  it("takes X-Title first, then X-Router-Title; the body's session_id wins over X-Session-Id", async () => {
    const res = await h.post({ ...ok, session_id: "body-session" }, { headers: { "X-Router-Title": "Router Title", "X-Session-Id": "header" } });
    const event = await h.eventFor(res.body.id);
    expect(event.appTitle).toBe("Router Title");
    expect(event.sessionId).toBe("body-session");
  });

  it("takes the first of a header sent twice, and joins a list header's values", async () => {
    const { status, body } = await rawPost(JSON.stringify(ok), {
      "x-title": ["First, Inc.", "Second"],
      "x-router-metadata": ["enabled", "enabled"],
      "x-app-categories": ["coding", "chat"],
    });
    expect(status).toBe(200);
    const parsed = JSON.parse(body);
    expect(parsed.router_metadata).toBeDefined();
    const event = await h.eventFor(parsed.id);
    expect(event.appTitle).toBe("First, Inc.");
    expect(event.appCategories).toEqual(["coding", "chat"]);
  });
});

/** A request with repeated header lines, which fetch would fold into one. */
function rawPost(body: string, headers: Record<string, string[]>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${DEFAULT_TOKEN}`, ...headers },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("refusals before any provider is asked", () => {
  it("refuses a paused key with 403 key_paused", async () => {
    h.addKey("rt-v1-paused", { paused: true, pausedReason: "runaway" });
    const res = await h.post(ok, { token: "rt-v1-paused" });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "key_paused", details: { paused_reason: "runaway" } });
    expect(h.upstreamCalls()).toBe(0);
  });

  it("refuses a management key", async () => {
    h.addKey("rt-mgmt-x", { class: "management" });
    const res = await h.post(ok, { token: "rt-mgmt-x" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });

  it("refuses a hard-limit key at its ceiling with 403 budget_exceeded, and the refusal is recorded", async () => {
    h.addKey("rt-v1-spent", { limitNanos: 0n, limitMode: "hard" });
    const res = await h.post(ok, { token: "rt-v1-spent", headers: { "X-Router-Metadata": "enabled" } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "budget_exceeded", details: { scope: "key" } });
    expect(h.upstreamCalls()).toBe(0);
    const event = await h.eventFor(res.body.router_metadata.generation_id);
    expect(event).toMatchObject({ status: "refused", errorCode: "budget_exceeded", attempts: [], servedModel: "" });
  });

  it("refuses a hard-limit key once settled spend reached its ceiling", async () => {
    const caller = h.addKey("rt-v1-small", { limitNanos: 1_000n, limitMode: "hard" });
    h.fakes.openai.script({ usage: { prompt: 100, completion: 100 } });
    expect((await h.post(ok, { token: "rt-v1-small" })).status).toBe(200);
    await waitFor(async () => (await h.keyUsage(caller)) >= 1_000n, { what: "settlement" });
    const res = await h.post(ok, { token: "rt-v1-small" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("budget_exceeded");
    expect(h.fakes.openai.requests).toHaveLength(1);
  });

  it("serves a soft-limit key past its ceiling with x-router-limit-warning", async () => {
    h.addKey("rt-v1-soft", { limitNanos: 0n, limitMode: "soft" });
    const res = await h.post(ok, { token: "rt-v1-soft" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-limit-warning")).toEqual(expect.any(String));
    const stream = await h.stream({ ...ok, stream: true }, { token: "rt-v1-soft" });
    expect(stream.headers.get("x-router-limit-warning")).toEqual(expect.any(String));
  });

  it("answers 404 no_route naming the provider when the organisation holds no credential for it", async () => {
    const caller = h.addKey("rt-v1-other-org", {}, "org_without_keys");
    h.setCredentials(caller.orgId, [{ providerSlug: "openai" }]);
    const res = await h.post({ model: "test/claude", messages: userMessage() }, { token: "rt-v1-other-org" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("no_route");
    expect(res.body.error.message).toContain("anthropic");
    expect(h.upstreamCalls()).toBe(0);
  });

  it("answers 404 no_route when the credential's model filter excludes the model", async () => {
    const caller = h.addKey("rt-v1-filtered", {}, "org_filtered");
    h.setCredentials(caller.orgId, [{ providerSlug: "openai", modelFilter: { deny: ["test/gpt"] } }]);
    const res = await h.post(ok, { token: "rt-v1-filtered" });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: "no_route", details: { unsatisfied_filters: ["byok_credential"], providers: ["openai"] } });
    expect(h.upstreamCalls()).toBe(0);
  });

  it("uses the first credential, in tier and priority order, whose model filter allows the model", async () => {
    const caller = h.addKey("rt-v1-two-keys", {}, "org_two_keys");
    h.setCredentials(caller.orgId, [
      { providerSlug: "openai", apiKey: "sk-first", modelFilter: { allow: ["test/multi"] } },
      { providerSlug: "openai", apiKey: "sk-second" },
    ]);
    expect((await h.post(ok, { token: "rt-v1-two-keys" })).status).toBe(200);
    expect(h.fakes.openai.requests[0]!.headers.authorization).toBe("Bearer sk-second");
  });

  it("routes by the request's provider preferences: order puts its providers before a cheaper one", async () => {
    const res = await h.post({ model: "test/multi", messages: userMessage(), provider: { sort: "price", order: ["openai"] } });
    expect(res.status).toBe(200);
    expect(h.fakes.openai.requests).toHaveLength(1);
    expect(h.fakes.groq.requests).toHaveLength(0);
  });

  it("answers 404 no_route naming each preference that removed an endpoint when none is left", async () => {
    const res = await h.post({ model: "test/multi", messages: userMessage(), provider: { only: ["openai"], max_price: { prompt: 1 } } });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: "no_route", details: { unsatisfied_filters: ["provider.only", "provider.max_price.prompt"] } });
    expect(h.upstreamCalls()).toBe(0);
  });

  it("restricts a key by the guardrail assigned to it, over the request's own preferences, and names it in no_route", async () => {
    const guarded = h.addKey("rt-v1-guarded");
    const created = await h.manageRouting("POST", "/v1/guardrails", { name: "groq only", allowed_providers: ["groq"] });
    expect(created.status).toBe(201);
    const assigned = await h.manageRouting("POST", `/v1/guardrails/${created.body.data.id}/assignments`, { subject_type: "key", subject_id: guarded.key.hash });
    expect(assigned.status).toBe(201);

    const multi = await h.post({ model: "test/multi", messages: userMessage(), provider: { order: ["openai"] } }, { token: "rt-v1-guarded" });
    expect(multi.status).toBe(200);
    expect(h.fakes.groq.requests).toHaveLength(1);
    expect(h.fakes.openai.requests).toHaveLength(0);

    const gpt = await h.post(ok, { token: "rt-v1-guarded" });
    expect(gpt.status).toBe(404);
    expect(gpt.body.error).toMatchObject({ code: "no_route", details: { unsatisfied_filters: ["guardrail.allowed_providers"] } });
    // Another key of the organisation is not restricted.
    expect((await h.post(ok)).status).toBe(200);
  });

  it("answers 404 model_not_found for a model the catalog does not know", async () => {
    const res = await h.post({ model: "nobody/nothing", messages: userMessage() });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("model_not_found");
  });

  it("still needs authentication", async () => {
    const res = await h.post(ok, { token: `${DEFAULT_TOKEN}-unknown` });
    expect(res.status).toBe(401);
  });
});
