import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { fakeTokenCount, gatewayClient, startFakeAnthropic, startFakeOpenAi, startStack, type FakeUpstream, type Stack } from "@router/testkit";
import { describeRun, runClaude } from "./claude-code-cli";

/**
 * Claude Code, the real CLI from npm (`@anthropic-ai/claude-code`, pinned), in print mode with its
 * own defaults and only `ANTHROPIC_BASE_URL` and a Router key, against the gateway and fake
 * upstreams. Nothing leaves the machine: its telemetry, updates and error reports are switched off
 * by its documented variables, and every provider is a fake on loopback.
 */

/** The text a request sends back as the result of tool call `id`, in either wire format; null when it has none. */
function toolResultText(body: unknown, id: string): string | null {
  const messages = ((body as { messages?: unknown[] } | null)?.messages ?? []) as Record<string, unknown>[];
  for (const m of messages) {
    if (m.role === "tool" && m.tool_call_id === id) return JSON.stringify(m.content);
    for (const block of Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : []) {
      if (block.type === "tool_result" && block.tool_use_id === id) return JSON.stringify(block.content);
    }
  }
  return null;
}

const messagesCalls = (fake: FakeUpstream) => fake.requests.filter((r) => r.path === "/v1/messages");

describe("Claude Code through Router with its own defaults", () => {
  let stack: Stack;
  let anthropic: FakeUpstream;
  let openai: FakeUpstream;
  let key: string;
  let work: string;

  beforeAll(async () => {
    [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAi()]);
    stack = await startStack({ providerBaseUrls: { anthropic: anthropic.url, openai: openai.url } });
    const org = await stack.createOrg("Claude Code Co");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const provider of ["anthropic", "openai"]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: `sk-${provider}-claude-code-0001` })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "claude-code" });
    expect(created.status).toBe(201);
    key = created.json.data.key as string;
    work = mkdtempSync(join(tmpdir(), "claude-work-"));
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([anthropic?.close(), openai?.close()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  beforeEach(() => {
    anthropic.reset();
    openai.reset();
  });

  it.each([
    ["its default model", undefined],
    ["an Anthropic model it names by its own id", "claude-sonnet-4-5-20250929"],
    ["Router's id of an Anthropic model", "anthropic/claude-haiku-4.5"],
  ])("answers a prompt on %s, with cache markers reaching Anthropic unchanged", async (_what, model) => {
    anthropic.setDefault({ text: "The answer is 4." });
    const run = await runClaude(stack.gatewayUrl, key, "What is 2+2?", { model, cwd: work });
    expect({ run: describeRun(run), result: run.result?.result }).toEqual({ run: expect.any(String), result: "The answer is 4." });
    const main = messagesCalls(anthropic).find((c) => JSON.stringify(c.body).includes("What is 2+2?"));
    expect(main).toBeDefined();
    const sent = main!.body as { model: string; system: { cache_control?: unknown }[]; messages: { content: { cache_control?: unknown }[] }[] };
    expect(sent.model).toMatch(/^claude-/);
    // Its prompt-cache breakpoints: on the system prompt and on the last user block.
    expect(sent.system.some((b) => b.cache_control !== undefined)).toBe(true);
    expect(sent.messages.at(-1)!.content.some((b) => b.cache_control !== undefined)).toBe(true);
  }, 120_000);

  it("answers on a model of another family (OpenAI), its system reminders and thinking translated", async () => {
    openai.setDefault({ text: "Four." });
    const run = await runClaude(stack.gatewayUrl, key, "What is 2+2?", { model: "openai/gpt-4o-mini", cwd: work });
    expect({ run: describeRun(run), result: run.result?.result }).toEqual({ run: expect.any(String), result: "Four." });
    expect(messagesCalls(anthropic)).toHaveLength(0);
    const main = openai.requests.find((r) => JSON.stringify(r.body).includes("What is 2+2?"));
    expect(main).toBeDefined();
    const sent = main!.body as { messages: { role: string }[]; max_completion_tokens: number };
    // Its system reminders stay system messages where they were; its 32,000-token default fits the model.
    expect(sent.messages.filter((m) => m.role === "system").length).toBeGreaterThan(0);
    expect(sent.max_completion_tokens).toBe(16384);
  }, 120_000);

  it.each([
    ["Anthropic", "anthropic/claude-sonnet-4.5"],
    ["OpenAI", "openai/gpt-4o-mini"],
  ])("runs a Bash tool loop on %s: the command runs and its output goes back to the model", async (_family, model) => {
    const fake = model.startsWith("anthropic/") ? anthropic : openai;
    // Claude Code asks Anthropic for thinking, which then opens every turn with a signed thinking block.
    const reasoning = fake === anthropic ? "The user wants a file written." : undefined;
    fake.script({ reasoning, toolCalls: [{ id: "toolu_bash1", name: "Bash", arguments: { command: "echo routed > bash-out.txt && cat bash-out.txt", description: "Write a file" } }] });
    fake.setDefault({ text: "Done: the file says routed." });
    const run = await runClaude(stack.gatewayUrl, key, "Write routed to bash-out.txt", { model, cwd: work, args: ["--allowedTools", "Bash"] });
    expect({ run: describeRun(run), result: run.result?.result }).toEqual({ run: expect.any(String), result: "Done: the file says routed." });
    expect(readFileSync(join(work, "bash-out.txt"), "utf8").trim()).toBe("routed");
    expect(fake.requests.map((r) => toolResultText(r.body, "toolu_bash1")).find((t) => t !== null)).toContain("routed");
  }, 120_000);

  it.each([
    ["Anthropic", "anthropic/claude-sonnet-4.5"],
    ["OpenAI", "openai/gpt-4o-mini"],
  ])("reads a PNG on %s: the image in the tool result reaches the model", async (_family, model) => {
    const fake = model.startsWith("anthropic/") ? anthropic : openai;
    const png = join(work, "logo.png");
    writeFileSync(png, ONE_PIXEL_PNG);
    const reasoning = fake === anthropic ? "I should look at the image." : undefined;
    fake.script({ reasoning, toolCalls: [{ id: "toolu_read1", name: "Read", arguments: { file_path: png } }] });
    fake.setDefault({ text: "A single pixel." });
    const run = await runClaude(stack.gatewayUrl, key, "What is in logo.png?", { model, cwd: work, args: ["--allowedTools", "Read"] });
    expect({ run: describeRun(run), result: run.result?.result }).toEqual({ run: expect.any(String), result: "A single pixel." });
    const followUp = fake.requests.find((r) => JSON.stringify(r.body).includes("toolu_read1") && JSON.stringify(r.body).includes("iVBOR"));
    expect(followUp).toBeDefined();
  }, 120_000);

  it("counts its context with count_tokens (/context), not with billable completions", async () => {
    const run = await runClaude(stack.gatewayUrl, key, "/context", { model: "claude-sonnet-4-5-20250929", cwd: work });
    expect({ run: describeRun(run), result: run.result?.result }).toEqual({ run: expect.any(String), result: expect.stringContaining("Context Usage") });
    // Without the route it fell back to about twenty one-token completions, each billed.
    expect(anthropic.requests.filter((r) => r.path === "/v1/messages/count_tokens").length).toBeGreaterThan(5);
    expect(messagesCalls(anthropic)).toHaveLength(0);
  }, 120_000);

  it("keeps Anthropic's server tools for Anthropic, and drops them for another family, naming them", async () => {
    const client = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
    const params = {
      max_tokens: 200,
      messages: [{ role: "user" as const, content: "News today?" }],
      tools: [{ type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 3 }],
    };
    anthropic.setDefault({ text: "Searched." });
    const atAnthropic = await client.messages.create({ model: "anthropic/claude-sonnet-4.5", ...params }).withResponse();
    expect(atAnthropic.response.headers.get("x-router-dropped-tools")).toBeNull();
    expect((messagesCalls(anthropic).at(-1)!.body as { tools: unknown[] }).tools).toEqual(params.tools);

    openai.setDefault({ text: "I cannot search." });
    const elsewhere = await client.messages.create({ model: "openai/gpt-4o-mini", ...params }).withResponse();
    expect(elsewhere.response.headers.get("x-router-dropped-tools")).toBe("web_search");
    expect(openai.requests.at(-1)!.body).not.toHaveProperty("tools");
    const record = await gatewayClient(stack.gatewayUrl, key).get(`/v1/generation?id=${elsewhere.data.id}`);
    expect(record.json.data.dropped_tools).toEqual(["web_search"]);
  });

  it("clamps max_tokens above the model's maximum output, says so, and Anthropic takes the request", async () => {
    const client = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
    anthropic.setDefault({ text: "Short." });
    const params = { model: "claude-3-5-haiku-20241022", max_tokens: 128000, messages: [{ role: "user" as const, content: "Hi" }] };
    // The SDK wants a stream for so large a bound unless a timeout is given.
    const whole = await client.messages.create(params, { timeout: 60_000 }).withResponse();
    expect(whole.data.content).toEqual([{ type: "text", text: "Short." }]);
    expect(whole.response.headers.get("x-router-max-tokens")).toBe("8192");
    expect((messagesCalls(anthropic).at(-1)!.body as { max_tokens: number }).max_tokens).toBe(8192);
    const streamed = await client.messages.create({ ...params, stream: true }).withResponse();
    expect(streamed.response.headers.get("x-router-max-tokens")).toBe("8192");
    for await (const _event of streamed.data) {
      // drained: the answer is the fake's, checked above
    }
    const fits = await client.messages.create({ ...params, max_tokens: 100 }).withResponse();
    expect(fits.response.headers.get("x-router-max-tokens")).toBeNull();
  });

  describe("POST /v1/messages/count_tokens", () => {
    let client: Anthropic;
    beforeAll(() => {
      client = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
    });

    const body = {
      system: [{ type: "text" as const, text: "You are terse.", cache_control: { type: "ephemeral" as const } }],
      messages: [{ role: "user" as const, content: "How many tokens is this sentence?" }],
      tools: [{ name: "Bash", input_schema: { type: "object" as const, properties: { command: { type: "string" } } } }],
    };

    it("is Anthropic's own count, asked with the organisation's credential, for a model Anthropic serves; nothing is billed", async () => {
      const { data, response } = await client.messages.countTokens({ model: "anthropic/claude-sonnet-4.5", ...body }).withResponse();
      const asked = anthropic.requests.filter((r) => r.path === "/v1/messages/count_tokens");
      expect(asked).toHaveLength(1);
      expect(asked[0]!.headers["x-api-key"]).toBe("sk-anthropic-claude-code-0001");
      expect(asked[0]!.body).toEqual({ model: "claude-sonnet-4-5-20250929", ...body });
      expect(data.input_tokens).toBe(fakeTokenCount(asked[0]!.body as Record<string, unknown>));
      expect(response.headers.get("x-router-token-count")).toBe("provider");
      expect(anthropic.requests.filter((r) => r.path === "/v1/messages")).toHaveLength(0);
    });

    it("folds an agent's system messages for Anthropic, which refuses the role", async () => {
      anthropic.reset();
      const messages = [...body.messages, { role: "system", content: "<system-reminder>Be brief.</system-reminder>" }];
      const counted = await client.messages.countTokens({ model: "anthropic/claude-sonnet-4.5", ...body, messages } as Anthropic.MessageCountTokensParams);
      const asked = anthropic.requests.filter((r) => r.path === "/v1/messages/count_tokens");
      expect(counted.input_tokens).toBe(fakeTokenCount(asked[0]!.body as Record<string, unknown>));
      expect(JSON.stringify(asked[0]!.body)).toContain("Be brief.");
    });

    it("is an estimate, marked as one, for a model of another family; no provider is asked", async () => {
      anthropic.reset();
      const { data, response } = await client.messages.countTokens({ model: "openai/gpt-4o-mini", ...body }).withResponse();
      expect(data.input_tokens).toBeGreaterThan(5);
      expect(data.input_tokens).toBeLessThan(200);
      expect(response.headers.get("x-router-token-count")).toBe("estimate");
      expect(anthropic.requests).toHaveLength(0);
      expect(openai.requests).toHaveLength(0);
    });

    it("answers an unknown model with 404 in Anthropic's error shape", async () => {
      const err = await client.messages.countTokens({ model: "nobody/no-such-model", ...body }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    });
  });
});

// A 1x1 transparent PNG.
const ONE_PIXEL_PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
