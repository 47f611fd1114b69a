import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewayClient, startFakeAnthropic, startFakeGemini, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * What clients send and get beyond plain text, through the official SDKs and the separate-process
 * stack: chat completions' file and audio parts in each provider's own wire shape (or a 400 naming
 * the part no endpoint can read), OpenAI's own fields on a chat completions body (and not another
 * gateway's, which OpenAI refuses), and Anthropic's own answer on `/v1/messages` (server-tool
 * results, citations, usage it reports) passed on whole and streamed, as Anthropic sent it.
 */

type Slug = "openai" | "anthropic" | "google";

const PDF = Buffer.from("%PDF-1.4 a one-page report").toString("base64");
const WAV = Buffer.from("RIFF....WAVEfmt a short clip").toString("base64");
const pdfPart = { type: "file" as const, file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF}` } };
const audioPart = { type: "input_audio" as const, input_audio: { data: WAV, format: "wav" as const } };
const question = { type: "text" as const, text: "What do these say?" };

/** A web search Claude ran itself, and its answer citing the result: blocks Router does not model. */
const searchAnswer = [
  { type: "text", text: "I'll look that up." },
  { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: { query: "LLM routing gateway" } },
  {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_01",
    content: [{ type: "web_search_result", url: "https://example.com/gateways", title: "Gateways", encrypted_content: "EqgfCioIARgBIiQ3", page_age: "April 30, 2026" }],
  },
  {
    type: "text",
    text: "A gateway routes each request to a provider.",
    citations: [
      {
        type: "web_search_result_location",
        url: "https://example.com/gateways",
        title: "Gateways",
        encrypted_index: "Eo8BCioIAhgB",
        cited_text: "A gateway routes each request to a provider that can serve it.",
      },
    ],
  },
];
const webSearch = { type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 1 };

describe("content parts, provider fields and provider answers beyond plain text, through the SDKs", () => {
  let stack: Stack;
  const fakes = {} as Record<Slug, FakeUpstream>;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let inference: ReturnType<typeof gatewayClient>;

  beforeAll(async () => {
    // The OpenAI fake refuses a field OpenAI's API does not take, as OpenAI does.
    [fakes.openai, fakes.anthropic, fakes.google] = await Promise.all([startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
    // A busy two-core box can miss the default 20 s start of eight processes.
    stack = await startStack({ providerBaseUrls: { openai: fakes.openai.url, anthropic: fakes.anthropic.url, google: fakes.google.url }, startTimeoutMs: 60_000 });
    const org = await stack.createOrg("Fidelity Co");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const slug of ["openai", "anthropic", "google"]) {
      expect((await mgmt.post("/v1/provider-keys", { provider: slug, api_key: `sk-${slug}-fidelity-0001` })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "fidelity" });
    expect(created.status).toBe(201);
    const key = created.json.data.key as string;
    inference = gatewayClient(stack.gatewayUrl, key);
    openai = new OpenAI({ apiKey: key, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all(Object.values(fakes).map((f) => f.close()));
  });

  beforeEach(() => {
    for (const f of Object.values(fakes)) f.reset();
  });

  const lastBody = (slug: Slug) => fakes[slug].requests.at(-1)?.body as Record<string, any>;

  describe("chat completions file and audio parts", () => {
    it("reach OpenAI as the client wrote them", async () => {
      const res = await openai.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: [question, pdfPart, audioPart] }] });
      expect(res.choices[0]?.message.content).toBe("Hello from the fake upstream.");
      expect(lastBody("openai").messages[0].content).toEqual([question, pdfPart, audioPart]);
    });

    it("reach Anthropic as a PDF document block", async () => {
      const res = await openai.chat.completions.create({ model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: [question, pdfPart] }] });
      expect((res as unknown as { provider: string }).provider).toBe("anthropic");
      expect(lastBody("anthropic").messages[0].content).toEqual([
        { type: "text", text: "What do these say?" },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "report.pdf" },
      ]);
    });

    it("reach Gemini as inline data of their media types, streamed too", async () => {
      const stream = await openai.chat.completions.create({
        model: "google/gemini-2.5-flash",
        messages: [{ role: "user", content: [question, pdfPart, audioPart] }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe("Hello from the fake upstream.");
      expect(lastBody("google").contents[0].parts).toEqual([
        { text: "What do these say?" },
        { inlineData: { mimeType: "application/pdf", data: PDF } },
        { inlineData: { mimeType: "audio/wav", data: WAV } },
      ]);
    });

    it("that no endpoint of the route can read are a 400 naming the part, and no provider is asked", async () => {
      const err = await openai.chat.completions
        .create({ model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: [question, audioPart] }] })
        .then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("messages.0.content.1: anthropic cannot read audio");
      expect(fakes.anthropic.requests).toHaveLength(0);
    });

    it("of a shape the format does not allow are a 400 naming the nested field", async () => {
      const res = await inference.post("/v1/chat/completions", {
        model: "openai/gpt-4o-mini",
        messages: [{ role: "user", content: [question, { type: "input_audio", input_audio: { data: WAV, format: "ogg" } }] }],
      });
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe("messages.0.content.1.input_audio.format");
    });
  });

  describe("fields Router does not model on a chat completions body sent to OpenAI", () => {
    it("reach OpenAI when its API takes them; another gateway's own are left out rather than refused upstream", async () => {
      const body = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], service_tier: "flex", transforms: ["middle-out"] };
      const res = await inference.post("/v1/chat/completions", body);
      expect(res.status).toBe(200);
      expect(lastBody("openai")).toMatchObject({ service_tier: "flex" });
      expect(lastBody("openai")).not.toHaveProperty("transforms");
    });

    it("are refused by the fake as OpenAI refuses them, so a field Router passed by mistake would fail here", async () => {
      const res = await fetch(`${fakes.openai.url}/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer sk-openai-fidelity-0001", "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], transforms: ["middle-out"] }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe("Unrecognized request argument supplied: transforms");
    });
  });

  describe("Anthropic's own answer on /v1/messages", () => {
    const ask = { model: "anthropic/claude-sonnet-4.5", max_tokens: 1024, tools: [webSearch], messages: [{ role: "user" as const, content: "What is an LLM gateway?" }] };

    it("arrives whole: server-tool results, citations and Anthropic's usage fields, with Router's id and usage counts", async () => {
      fakes.anthropic.script({ anthropicContent: searchAnswer, usage: { prompt: 900, completion: 60 } });
      const msg = await anthropic.messages.create(ask);
      expect(msg.id).toMatch(/^gen-/);
      expect(msg.model).toBe("anthropic/claude-sonnet-4.5");
      expect(msg.content).toEqual(searchAnswer);
      expect(msg.stop_reason).toBe("end_turn");
      expect(msg.usage).toMatchObject({ input_tokens: 900, output_tokens: 60, server_tool_use: { web_search_requests: 1 } });
      // The server tool ran where it was sent: Anthropic got it as the client wrote it.
      expect(lastBody("anthropic").tools).toEqual([webSearch]);
      const gen = await waitFor(async () => {
        const r = await inference.get(`/v1/generation?id=${msg.id}`);
        return r.status === 200 ? (r.json.data as Record<string, unknown>) : undefined;
      });
      expect(gen).toMatchObject({ tokens_prompt: 900, tokens_completion: 60 });
    });

    it("streams as Anthropic streamed it: the SDK assembles the same blocks, citations from citations_delta", async () => {
      fakes.anthropic.script({ anthropicContent: searchAnswer, usage: { prompt: 900, completion: 60 } });
      const stream = anthropic.messages.stream(ask);
      const kinds: string[] = [];
      stream.on("streamEvent", (ev) => {
        if (ev.type === "content_block_delta") kinds.push(ev.delta.type);
      });
      const msg = await stream.finalMessage();
      expect(msg.id).toMatch(/^gen-/);
      expect(msg.content).toEqual(searchAnswer);
      expect(kinds).toContain("citations_delta");
      expect(msg.usage).toMatchObject({ input_tokens: 900, output_tokens: 60 });
    });

    it("from another family is rendered by Router as before (text blocks)", async () => {
      fakes.openai.script({ text: "Plain answer." });
      const msg = await anthropic.messages.create({ model: "openai/gpt-4o-mini", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
      expect(msg.content).toEqual([{ type: "text", text: "Plain answer." }]);
    });
  });
});
