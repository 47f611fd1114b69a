import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewayClient, startFakeAnthropic, startFakeOpenAi, startStack, type FakeUpstream, type Stack } from "@router/testkit";
import { runClaude } from "./claude-code-cli";

/**
 * Models named the way clients name them, and errors clients act on, through the official SDKs
 * and Claude Code: a provider's own model ids (`gpt-4o-mini`, `claude-sonnet-4-5-20250929`) route
 * to the catalog model, `models.retrieve` works with the SDKs' encoded slash and with an alias, an
 * unknown model is a 404 in each format's own shape, and `x-should-retry` tells a client whether
 * sending again can help (a revoked key: no; an overloaded provider: yes).
 */


/** Counts the requests that pass through it to the gateway, as a client's retries would show. */
async function countingProxy(target: string): Promise<{ url: string; count: (path: string) => number; close: () => Promise<void> }> {
  const seen: string[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    seen.push((req.url ?? "").split("?")[0] ?? "");
    const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    count: (path) => seen.filter((p) => p === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe("model ids as clients write them, and errors clients act on", () => {
  let stack: Stack;
  let fakeOpenAi: FakeUpstream;
  let fakeAnthropic: FakeUpstream;
  let key: string;
  let mgmt: ReturnType<typeof gatewayClient>;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    [fakeOpenAi, fakeAnthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
    stack = await startStack({ providerBaseUrls: { openai: fakeOpenAi.url, anthropic: fakeAnthropic.url } });
    const org = await stack.createOrg("Model Names Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const provider of ["openai", "anthropic"]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: `sk-${provider}-names-0001` })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "names" });
    expect(created.status).toBe(201);
    key = created.json.data.key as string;
    openai = new OpenAI({ apiKey: key, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([fakeOpenAi?.close(), fakeAnthropic?.close()]);
  });

  beforeEach(() => {
    fakeOpenAi.reset();
    fakeAnthropic.reset();
  });

  describe("models by id", () => {
    it("retrieves a model through the openai SDK by its catalog id (sent as openai%2Fgpt-4o-mini) and by OpenAI's own id", async () => {
      for (const name of ["openai/gpt-4o-mini", "gpt-4o-mini"]) {
        const model = await openai.models.retrieve(name);
        expect(model).toMatchObject({ id: "openai/gpt-4o-mini", object: "model", owned_by: "openai" });
        expect(typeof model.created).toBe("number");
        expect((model as unknown as { aliases: string[] }).aliases).toContain("gpt-4o-mini");
      }
    });

    it("answers the plain-slash path with the same Model object", async () => {
      const res = await fetch(`${stack.gatewayUrl}/v1/models/openai/gpt-4o-mini`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: "openai/gpt-4o-mini", object: "model", owned_by: "openai" });
    });

    it("lists models through the openai SDK, each row a Model", async () => {
      const page = await openai.models.list();
      expect(page.data.length).toBeGreaterThan(10);
      expect(page.data.every((m) => m.object === "model" && typeof m.owned_by === "string")).toBe(true);
    });

    it("retrieves and lists models through the Anthropic SDK in Anthropic's shape, by an Anthropic id", async () => {
      const model = await anthropic.models.retrieve("claude-sonnet-4-5");
      expect(model).toMatchObject({ type: "model", id: "anthropic/claude-sonnet-4.5", display_name: "Anthropic: Claude Sonnet 4.5" });
      expect(Number.isNaN(Date.parse(model.created_at))).toBe(false);
      const page = await anthropic.models.list({ limit: 3 });
      expect(page.data).toHaveLength(3);
      expect(page.data.every((m) => m.type === "model")).toBe(true);
      expect(page.has_more).toBe(true);
    });

    it("answers an unknown model with the SDK's NotFoundError", async () => {
      const err = await openai.models.retrieve("nobody/nothing").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    });
  });

  describe("a provider's own model id on the inference routes", () => {
    it("serves a chat completion on gpt-4o-mini from the catalog's openai/gpt-4o-mini", async () => {
      fakeOpenAi.script({ text: "Hi from mini." });
      const res = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });
      expect(res.choices[0]?.message.content).toBe("Hi from mini.");
      expect(res.model).toBe("openai/gpt-4o-mini");
      expect((fakeOpenAi.requests.at(-1)?.body as { model: string }).model).toBe("gpt-4o-mini");
    });

    it.each([
      ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"],
      ["claude-haiku-4-5", "claude-haiku-4-5-20251001"],
      // Claude Code 2.1's default model.
      ["claude-opus-5-5", "claude-opus-5-5"],
    ])("serves a Messages call on %s from Anthropic as %s", async (name, upstream) => {
      fakeAnthropic.script({ text: "Hi from Claude." });
      const res = await anthropic.messages.create({ model: name, max_tokens: 64, messages: [{ role: "user", content: "Hi" }] });
      expect(res.content).toEqual([{ type: "text", text: "Hi from Claude." }]);
      expect((fakeAnthropic.requests.at(-1)?.body as { model: string }).model).toBe(upstream);
    });

    it("answers an unknown model with 404 model_not_found in each format's own shape, telling clients not to retry", async () => {
      const model = "claude-no-such-model-9";
      const post = (path: string, body: Record<string, unknown>) =>
        fetch(`${stack.gatewayUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      const messages = await post("/v1/messages", { model, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] });
      expect(messages.status).toBe(404);
      expect(messages.headers.get("x-should-retry")).toBe("false");
      expect(await messages.json()).toMatchObject({ type: "error", error: { type: "not_found_error", code: "model_not_found" } });
      const chat = await post("/v1/chat/completions", { model, messages: [{ role: "user", content: "Hi" }] });
      expect(chat.status).toBe(404);
      // The chat route's own envelope (OpenRouter's): status and code.
      expect(await chat.json()).toMatchObject({ error: { status: 404, code: "model_not_found" } });
      const responses = await post("/v1/responses", { model, input: "Hi" });
      expect(responses.status).toBe(404);
      expect(await responses.json()).toMatchObject({ error: { type: "not_found_error", code: "model_not_found" } });
      const sdk = await anthropic.messages.create({ model, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);
      expect(sdk).toBeInstanceOf(Anthropic.NotFoundError);
      expect(fakeAnthropic.requests).toHaveLength(0);
    });
  });

  describe("errors", () => {
    it("answers a revoked key with 401 and x-should-retry: false, which the Anthropic SDK obeys", async () => {
      const created = await mgmt.post("/v1/keys", { name: "to-revoke" });
      expect((await mgmt.del(`/v1/keys/${created.json.data.hash as string}`)).status).toBe(200);
      const proxy = await countingProxy(stack.gatewayUrl);
      try {
        const client = new Anthropic({ apiKey: created.json.data.key as string, baseURL: proxy.url, maxRetries: 3 });
        const { response } = await client.messages
          .create({ model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "Hi" }] })
          .withResponse()
          .catch((e: unknown) => ({ response: e }));
        expect(response).toBeInstanceOf(Anthropic.AuthenticationError);
        expect((response as InstanceType<typeof Anthropic.AuthenticationError>).headers.get("x-should-retry")).toBe("false");
        expect(proxy.count("/v1/messages")).toBe(1);
      } finally {
        await proxy.close();
      }
    });

    it("stops Claude Code at once on a revoked key instead of retrying for minutes", async () => {
      const created = await mgmt.post("/v1/keys", { name: "claude-revoked" });
      expect((await mgmt.del(`/v1/keys/${created.json.data.hash as string}`)).status).toBe(200);
      const proxy = await countingProxy(stack.gatewayUrl);
      try {
        // Without the header Claude Code retries a 401 for minutes; the timeout turns that into a failure here.
        const run = await runClaude(proxy.url, created.json.data.key as string, "Hi", { cwd: tmpdir(), timeoutMs: 45_000 });
        expect(run.result).toMatchObject({ terminal_reason: "api_error" });
        expect(proxy.count("/v1/messages")).toBe(1);
      } finally {
        await proxy.close();
      }
    }, 60_000);

    it("answers Anthropic's 529 as overloaded_error with status 529 on /v1/messages, and retryable", async () => {
      fakeAnthropic.script({ failure: { kind: "status", status: 529, message: "Overloaded" } });
      const res = await fetch(`${stack.gatewayUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-3-5-haiku", max_tokens: 16, messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(res.status).toBe(529);
      expect(res.headers.get("x-should-retry")).toBe("true");
      expect(await res.json()).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
    });

    it("answers the same overload on /v1/chat/completions as OpenAI's 503", async () => {
      fakeAnthropic.script({ failure: { kind: "status", status: 529, message: "Overloaded" } });
      const err = await openai.chat.completions.create({ model: "claude-3-5-haiku", messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect((err as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(503);
    });

    it("names the nested block a Messages body refused: its index, its place and its field", async () => {
      const image = { type: "image", source: { type: "base64", media_type: "text/plain", data: "aGk=" } };
      const err = await anthropic.messages
        .create({
          model: "claude-haiku-4-5",
          max_tokens: 16,
          messages: [
            { role: "user", content: "Look" },
            { role: "assistant", content: "At what?" },
            { role: "user", content: "This" },
            { role: "user", content: [{ type: "text", text: "here:" }, image as never] },
          ],
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const bad = err as InstanceType<typeof Anthropic.BadRequestError>;
      expect(bad.headers.get("x-should-retry")).toBe("false");
      expect(bad.error).toMatchObject({ type: "error", error: { type: "invalid_request_error", details: { field: "messages.3.content.1.source.media_type" } } });
    });

    it("takes a Messages body past the usual 10 MB, up to Anthropic's 32 MB, and answers one past it with request_too_large", async () => {
      fakeAnthropic.script({ text: "Long read." });
      const big = "x".repeat(12 * 1024 * 1024);
      const res = await anthropic.messages.create({ model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: big }] });
      expect(res.content).toEqual([{ type: "text", text: "Long read." }]);
      const tooBig = await fetch(`${stack.gatewayUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "x".repeat(33 * 1024 * 1024) }] }),
      });
      expect(tooBig.status).toBe(413);
      expect(tooBig.headers.get("x-should-retry")).toBe("false");
      expect(await tooBig.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
      // Other routes keep the usual limit.
      const chat = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: big }] }),
      });
      expect(chat.status).toBe(413);
    }, 60_000);
  });
});
