import {
  bedrockChunkFrame,
  bedrockExceptionFrame,
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  startFakeBedrock,
  verifyBedrockSignature,
  type FakeBedrock,
} from "@router/testkit";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { StreamEventReader } from "../../src/dispatch/stream-reader";
import { parseMessages } from "../../../../libs/inference-api/src/anthropic-messages/request";
import type { BedrockCredential } from "@router/providers";
import { bedrockAdapters } from "../../../../libs/providers/src/bedrock";
import { anthropicModelName } from "../../../../libs/providers/src/bedrock/anthropic";
import { bedrockEmbeddings } from "../../../../libs/providers/src/bedrock/embeddings";
import { parseBedrockError } from "../../../../libs/providers/src/bedrock/errors";
import { BedrockSigner, type AssumedRole, type AssumeRoleInput, type RoleAssumer } from "../../../../libs/providers/src/bedrock/signing";
import { UnsupportedRequest, UpstreamAuthError, type ProviderAdapter, type StreamEvent, type UpstreamHttpRequest, type UpstreamTarget } from "@router/providers";
import { bodyOf, chat, collect, target } from "./wire-samples";

const CLAUDE = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0";
const credential = (overrides: Partial<BedrockCredential> = {}): BedrockCredential => ({
  region: "eu-central-1",
  access_key_id: FAKE_AWS_ACCESS_KEY_ID,
  secret_access_key: FAKE_AWS_SECRET_ACCESS_KEY,
  ...overrides,
});

function bedrockTarget(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return target({
    providerSlug: "bedrock",
    baseUrl: "https://bedrock-runtime.{region}.amazonaws.com",
    modelId: "anthropic/claude-sonnet-4.5",
    upstreamModel: CLAUDE,
    apiKey: "",
    cloud: { provider: "bedrock", ...credential() },
    region: "eu-central-1",
    maxOutputTokens: 64000,
    ...overrides,
  });
}

const claude = bedrockAdapters.anthropic;
const converse = bedrockAdapters.bedrock;

/** Feeds binary frames through the adapter's framer and decoder in small pieces, as a network would. */
async function decodeFrames(adapter: ProviderAdapter, frames: Uint8Array[], pieceBytes = 5, keepNative = false): Promise<StreamEvent[]> {
  const bytes = Buffer.concat(frames);
  async function* pieces(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < bytes.length; i += pieceBytes) yield bytes.subarray(i, i + pieceBytes);
  }
  const reader = new StreamEventReader(pieces(), adapter.createStreamDecoder(keepNative), adapter.createFramer);
  const out: StreamEvent[] = [];
  for (let ev = await reader.next(); ev; ev = await reader.next()) out.push(ev);
  return out;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const converseFrame = (eventType: string, payload: unknown): Uint8Array =>
  codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });

describe("Bedrock URLs", () => {
  it("puts the region in the host and encodes the model id's colon as the AWS SDK does", () => {
    const req = claude.buildRequest(chat({}), bedrockTarget(), false);
    expect(req.url.href).toBe("https://bedrock-runtime.eu-central-1.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke");
    const stream = claude.buildRequest(chat({}), bedrockTarget({ region: "us-east-1", upstreamModel: "us.anthropic.claude-haiku-4-5-20251001-v1:0" }), true);
    expect(stream.url.href).toBe("https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/invoke-with-response-stream");
  });

  it("uses a base URL without a region placeholder as it is (a proxy, a test's fake)", () => {
    const req = converse.buildRequest(chat({}), bedrockTarget({ baseUrl: "http://127.0.0.1:9999/", upstreamModel: "meta.llama3-3-70b-instruct-v1:0" }), true);
    expect(req.url.href).toBe("http://127.0.0.1:9999/model/meta.llama3-3-70b-instruct-v1%3A0/converse-stream");
  });
});

describe("Claude on Bedrock (InvokeModel with Anthropic's Messages body)", () => {
  it("sends the Messages body without model and stream, with Bedrock's API version and the beta flags in the body", () => {
    const req = claude.buildRequest(chat({ max_tokens: 300, temperature: 0.5 }), bedrockTarget({ vendorBeta: "context-1m-2025-08-07, interleaved-thinking-2025-05-14" }), true);
    const body = bodyOf(req);
    expect(body).not.toHaveProperty("model");
    expect(body).not.toHaveProperty("stream");
    expect(body).toMatchObject({
      anthropic_version: "bedrock-2023-05-31",
      anthropic_beta: ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"],
      max_tokens: 300,
      temperature: 0.5,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    });
    expect(req.headers).toEqual({ "content-type": "application/json", accept: "application/vnd.amazon.eventstream" });
  });

  it("names the model as Anthropic does for what it decides by the model (a thinking budget for Sonnet 4.5)", () => {
    expect(anthropicModelName(CLAUDE)).toBe("claude-sonnet-4-5-20250929");
    expect(anthropicModelName("anthropic.claude-haiku-4-5-20251001-v1:0")).toBe("claude-haiku-4-5-20251001");
    const { request, native } = parseMessages({
      model: "anthropic/claude-sonnet-4.5",
      max_tokens: 4000,
      thinking: { type: "adaptive" },
      messages: [{ role: "user", content: "Hi" }],
    });
    const body = bodyOf(claude.buildNativeRequest!(native.body, request, bedrockTarget(), false));
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 3200 });
  });

  it("passes a Messages-ingress body through with its cache markers", () => {
    const system = [{ type: "text", text: "You are a careful agent.", cache_control: { type: "ephemeral" } }];
    const messages = [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral", ttl: "1h" } }] }];
    const { request, native } = parseMessages({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, stream: true, system, messages });
    const req = claude.buildNativeRequest!(native.body, request, bedrockTarget(), true);
    expect(req.url.pathname).toMatch(/\/invoke-with-response-stream$/);
    expect(bodyOf(req)).toEqual({ anthropic_version: "bedrock-2023-05-31", max_tokens: 100, system, messages });
  });

  it("reads the event-stream chunks as Anthropic's events: text, tool calls, usage with cache reads and writes", async () => {
    const events = [
      { type: "message_start", message: { id: "msg_bdrk_1", type: "message", role: "assistant", content: [], usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Héllo " } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "world" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":' } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"Paris"}' } },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 7 } },
      { type: "message_stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: 10, outputTokenCount: 7 } },
    ];
    const out = await decodeFrames(claude, events.map(bedrockChunkFrame));
    const got = collect(out);
    expect(got.content).toBe("Héllo world");
    expect(got.tools[0]).toEqual({ id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(got.finishes).toEqual([{ finish: "tool_calls", native: "tool_use" }]);
    expect(got.usage).toEqual({ prompt: 130, completion: 7, cached: 100, cacheWrite5m: 20, reasoning: 0 });
    expect(out[out.length - 1]).toEqual({ type: "done" });
  });

  it("hands on each event as Anthropic's server-sent event for a Messages ingress", async () => {
    const start = { type: "message_start", message: { id: "m", usage: { input_tokens: 1, output_tokens: 1 } } };
    const out = await decodeFrames(claude, [bedrockChunkFrame(start), bedrockChunkFrame({ type: "message_stop" })], 3, true);
    const natives = out.flatMap((e) => (e.type === "native" ? [e.message] : []));
    expect(natives).toEqual([
      { event: "message_start", data: JSON.stringify(start) },
      { event: "message_stop", data: '{"type":"message_stop"}' },
    ]);
  });

  it("turns an exception frame into a stream error named by its exception type", async () => {
    const out = await decodeFrames(claude, [bedrockExceptionFrame("throttlingException", "Too many tokens, please wait before trying again.")]);
    expect(out).toEqual([{ type: "error", code: "throttlingException", message: "Too many tokens, please wait before trying again." }]);
  });

  it("reports a body cut inside a frame, or a frame whose checksum fails, as a stream error", async () => {
    const frame = bedrockChunkFrame({ type: "message_stop" });
    expect(await decodeFrames(claude, [frame.subarray(0, frame.length - 3)])).toEqual([{ type: "error", code: "malformed_event_stream", message: null }]);
    const corrupt = Buffer.from(frame);
    corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 10) ^ 0xff, corrupt.length - 10);
    expect(await decodeFrames(claude, [corrupt])).toEqual([{ type: "error", code: "malformed_event_stream", message: null }]);
  });

  it("reads a non-stream answer as Anthropic's, usage with cache tokens included", () => {
    const completion = claude.parseCompletion({
      id: "msg_bdrk_1",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "Hi there" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 5, cache_read_input_tokens: 50, cache_creation_input_tokens: 0, output_tokens: 3 },
    });
    expect(completion.choices[0]?.message.content).toBe("Hi there");
    expect(completion.usage).toEqual({ prompt: 55, completion: 3, cached: 50, reasoning: 0 });
  });
});

describe("Bedrock errors", () => {
  it("takes the error's type from x-amzn-errortype and the text from the body", () => {
    const headers = { "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/" };
    expect(parseBedrockError('{"message":"Too many requests, please wait before trying again."}', headers)).toEqual({
      code: "ThrottlingException",
      message: "Too many requests, please wait before trying again.",
    });
  });

  it("falls back to a __type in the body, and to no code at all", () => {
    expect(parseBedrockError('{"__type":"com.amazon.coral.service#UnrecognizedClientException","Message":"The security token included in the request is invalid."}')).toEqual({
      code: "UnrecognizedClientException",
      message: "The security token included in the request is invalid.",
    });
    expect(parseBedrockError('{"message":"Internal"}')).toEqual({ code: null, message: "Internal" });
    expect(parseBedrockError("<html>bad gateway</html>")).toEqual({ code: null, message: "<html>bad gateway</html>" });
  });
});

describe("Converse (every other model family)", () => {
  const llama = bedrockTarget({ modelId: "meta-llama/llama-3.3-70b-instruct", upstreamModel: "meta.llama3-3-70b-instruct-v1:0", maxOutputTokens: 2048 });
  const mistralLarge = bedrockTarget({ modelId: "mistralai/mistral-large", upstreamModel: "mistral.mistral-large-2407-v1:0", maxOutputTokens: 2048 });
  const png = "data:image/png;base64,iVBORw0KGgo=";

  it("refuses for Meta's Llama models what Converse does not take from them", () => {
    const fieldOf = (body: Record<string, unknown>, stream: boolean): string => {
      try {
        converse.buildRequest(chat(body), llama, stream);
        return "built";
      } catch (err) {
        return err instanceof UnsupportedRequest ? err.field : "other";
      }
    };
    const tools = [{ type: "function", function: { name: "f" } }];
    expect(fieldOf({ stop: ["END"] }, false)).toBe("stop");
    expect(fieldOf({ tools }, true)).toBe("tools");
    expect(fieldOf({ tools, tool_choice: "required" }, false)).toBe("tool_choice");
    expect(fieldOf({ tools }, false)).toBe("built");
    expect(() => converse.buildRequest(chat({ stop: ["END"], tools, tool_choice: "required" }), mistralLarge, true)).not.toThrow();
  });

  it("maps system, user parts, tool calls and results, inference settings and tools", () => {
    const req = chat({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "What is in this picture, and the weather?" }, { type: "image_url", image_url: { url: png } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
      ],
      max_tokens: 5000,
      temperature: 1.4,
      top_p: 0.9,
      stop: ["END"],
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    const built = converse.buildRequest(req, mistralLarge, false);
    expect(built.url.pathname).toBe("/model/mistral.mistral-large-2407-v1%3A0/converse");
    expect(bodyOf(built)).toEqual({
      system: [{ text: "Be brief." }],
      messages: [
        { role: "user", content: [{ text: "What is in this picture, and the weather?" }, { image: { format: "png", source: { bytes: "iVBORw0KGgo=" } } }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "call_1", name: "get_weather", input: { city: "Paris" } } }] },
        { role: "user", content: [{ toolResult: { toolUseId: "call_1", content: [{ text: "sunny" }] } }] },
      ],
      inferenceConfig: { maxTokens: 2048, temperature: 1, topP: 0.9, stopSequences: ["END"] },
      toolConfig: {
        tools: [{ toolSpec: { name: "get_weather", description: "Weather by city", inputSchema: { json: { type: "object", properties: { city: { type: "string" } } } } } }],
        toolChoice: { tool: { name: "get_weather" } },
      },
    });
  });

  it("marks prompt-cache breakpoints with cache points", () => {
    const req = chat({
      messages: [
        { role: "system", content: [{ type: "text", text: "Long instructions", cache_control: { type: "ephemeral" } }] },
        { role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] },
      ],
    });
    const body = bodyOf(converse.buildRequest(req, llama, false));
    expect(body.system).toEqual([{ text: "Long instructions" }, { cachePoint: { type: "default" } }]);
    expect(body.messages).toEqual([{ role: "user", content: [{ text: "Hi" }, { cachePoint: { type: "default" } }] }]);
  });

  it("refuses, naming the field, what Converse cannot express", () => {
    const refusal = (body: Record<string, unknown>): string => {
      try {
        converse.buildRequest(chat(body), llama, false);
      } catch (err) {
        if (err instanceof UnsupportedRequest) return err.field;
        throw err;
      }
      return "built";
    };
    expect(refusal({ top_k: 5 })).toBe("top_k");
    expect(refusal({ seed: 1 })).toBe("seed");
    expect(refusal({ frequency_penalty: 0.5 })).toBe("frequency_penalty");
    expect(refusal({ reasoning: { effort: "high" } })).toBe("reasoning");
    expect(refusal({ reasoning: { enabled: false } })).toBe("built");
    expect(refusal({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.test/cat.png" } }] }] })).toBe("messages.0.content.0");
    expect(refusal({ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] })).toBe("messages.0.content.0");
    const tools = [{ type: "function", function: { name: "f" } }];
    expect(refusal({ tools, parallel_tool_calls: false })).toBe("parallel_tool_calls");
    const history = [
      { role: "user", content: "Hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ];
    expect(refusal({ messages: history })).toBe("tools");
    expect(refusal({ messages: history, tools, tool_choice: "none" })).toBe("tool_choice");
    expect(refusal({ tools, tool_choice: "none" })).toBe("built");
  });

  it("reads an answer: text, tool calls, stop reasons and usage with cache tokens", () => {
    const completion = converse.parseCompletion({
      output: { message: { role: "assistant", content: [{ text: "Let me look." }, { toolUse: { toolUseId: "tooluse_1", name: "get_weather", input: { city: "Paris" } } }] } },
      stopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 45, cacheReadInputTokens: 20, cacheWriteInputTokens: 10 },
    });
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: { role: "assistant", content: "Let me look.", tool_calls: [{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      finish_reason: "tool_calls",
      native_finish_reason: "tool_use",
    });
    expect(completion.usage).toEqual({ prompt: 40, completion: 5, cached: 20, cacheWrite5m: 10, reasoning: 0 });
    const finish = (stopReason: string) => converse.parseCompletion({ output: { message: { content: [{ text: "x" }] } }, stopReason }).choices[0]?.finish_reason;
    expect(["end_turn", "stop_sequence", "max_tokens", "content_filtered", "guardrail_intervened", "model_context_window_exceeded"].map(finish)).toEqual([
      "stop",
      "stop",
      "length",
      "content_filter",
      "content_filter",
      "length",
    ]);
  });

  it("decodes ConverseStream frames: text, a tool call's start and input, the stop reason, usage last", async () => {
    const frames = [
      converseFrame("messageStart", { role: "assistant" }),
      converseFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Checking " } }),
      converseFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "now." } }),
      converseFrame("contentBlockStop", { contentBlockIndex: 0 }),
      converseFrame("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tooluse_9", name: "get_weather" } } }),
      converseFrame("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: '{"city"' } } }),
      converseFrame("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: ':"Oslo"}' } } }),
      converseFrame("contentBlockStop", { contentBlockIndex: 1 }),
      converseFrame("messageStop", { stopReason: "tool_use" }),
      converseFrame("metadata", { usage: { inputTokens: 12, outputTokens: 9, totalTokens: 21 }, metrics: { latencyMs: 300 } }),
    ];
    const out = await decodeFrames(converse, frames, 11);
    const got = collect(out);
    expect(got.content).toBe("Checking now.");
    expect(got.tools[0]).toEqual({ id: "tooluse_9", name: "get_weather", arguments: '{"city":"Oslo"}' });
    expect(got.finishes).toEqual([{ finish: "tool_calls", native: "tool_use" }]);
    expect(got.usage).toEqual({ prompt: 12, completion: 9, cached: 0, reasoning: 0 });
    expect(out[out.length - 1]).toEqual({ type: "done" });
  });

  it("turns a ConverseStream exception into a stream error", async () => {
    const out = await decodeFrames(converse, [converseFrame("messageStart", { role: "assistant" }), bedrockExceptionFrame("modelStreamErrorException", "The model failed.")]);
    expect(out[out.length - 1]).toEqual({ type: "error", code: "modelStreamErrorException", message: "The model failed." });
  });
});

describe("Bedrock embeddings", () => {
  const titan = bedrockTarget({ modelId: "amazon/titan-embed-text-v2", upstreamModel: "amazon.titan-embed-text-v2:0" });
  const cohere = bedrockTarget({ modelId: "cohere/embed-english-v3", upstreamModel: "cohere.embed-english-v3" });
  const request = (input: string[], dimensions?: number) => ({ input, encodingFormat: "float" as const, ...(dimensions ? { dimensions } : {}) });

  it("asks Titan for one text's vector, normalized, of the size asked for", () => {
    const req = bedrockEmbeddings.buildRequest(request(["hello world"], 256), titan);
    expect(req.url.href).toBe("https://bedrock-runtime.eu-central-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke");
    expect(bodyOf(req)).toEqual({ inputText: "hello world", dimensions: 256, normalize: true });
    expect(bedrockEmbeddings.parse({ embedding: [0.1, 0.2], inputTextTokenCount: 2 }, 1)).toEqual({ vectors: [[0.1, 0.2]], promptTokens: 2 });
  });

  it("refuses several texts or a size Titan does not make", () => {
    expect(() => bedrockEmbeddings.buildRequest(request(["a", "b"]), titan)).toThrow(expect.objectContaining({ field: "input" }));
    expect(() => bedrockEmbeddings.buildRequest(request(["a"], 300), titan)).toThrow(expect.objectContaining({ field: "dimensions" }));
  });

  it("asks Cohere for every text at once, as documents, and reads the vectors in order", () => {
    const req = bedrockEmbeddings.buildRequest(request(["a", "b"]), cohere);
    expect(bodyOf(req)).toEqual({ texts: ["a", "b"], input_type: "search_document" });
    expect(bedrockEmbeddings.parse({ id: "x", response_type: "embeddings_floats", texts: ["a", "b"], embeddings: [[1], [2]] }, 2)).toEqual({ vectors: [[1], [2]], promptTokens: null });
    expect(() => bedrockEmbeddings.parse({ embeddings: [[1]] }, 2)).toThrow("1 embeddings for 2 inputs");
    expect(() => bedrockEmbeddings.buildRequest(request(["a"], 256), cohere)).toThrow(expect.objectContaining({ field: "dimensions" }));
  });
});

describe("SigV4 signing", () => {
  const at = new Date("2026-11-27T12:00:00Z");
  const clock = { now: () => at };

  /** The request as the fake receives it: the header names lower-cased, the path as sent. */
  function received(req: UpstreamHttpRequest) {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
    return { method: "POST", path: req.url.pathname, query: Object.fromEntries(req.url.searchParams), headers, rawBody: req.body };
  }
  const verify = (req: UpstreamHttpRequest, now = at, regions = ["eu-central-1"]) =>
    verifyBedrockSignature(received(req), { keys: { [FAKE_AWS_ACCESS_KEY_ID]: FAKE_AWS_SECRET_ACCESS_KEY }, regions, now });

  async function signed(cred: BedrockCredential = credential(), t: UpstreamTarget = bedrockTarget({ baseUrl: "http://127.0.0.1:8443" })) {
    const signer = new BedrockSigner({ clock });
    const built = claude.buildRequest(chat({ messages: [{ role: "user", content: "Grüße, \u2028 world" }] }), { ...t, cloud: { provider: "bedrock", ...cred } }, true);
    return signer.sign(built, { ...t, cloud: { provider: "bedrock", ...cred } });
  }

  it("signs for service bedrock in the endpoint's region, over the host, content type, accept and body; the fake's verifier agrees", async () => {
    const req = await signed();
    expect(req.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${FAKE_AWS_ACCESS_KEY_ID}/20261127/eu-central-1/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$`),
    );
    expect(req.headers["x-amz-date"]).toBe("20261127T120000Z");
    expect(req.url.pathname).toBe("/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream");
    await expect(verify(req)).resolves.toBeNull();
  });

  it("is refused for a wrong secret, a changed body, a region the account lacks, or a clock five minutes off", async () => {
    const wrong = await signed(credential({ secret_access_key: "not-the-secret" }));
    await expect(verify(wrong)).resolves.toMatchObject({ status: 403, code: "InvalidSignatureException" });
    const req = await signed();
    await expect(verify({ ...req, body: req.body.replace("world", "World") })).resolves.toMatchObject({ status: 403, code: "InvalidSignatureException" });
    await expect(verify(req, at, ["us-east-1"])).resolves.toMatchObject({ status: 403, message: "Credential should be scoped to a valid region." });
    await expect(verify(req, new Date(at.getTime() + 5 * 60_000 + 1000))).resolves.toMatchObject({ status: 403, code: "InvalidSignatureException" });
    await expect(verify(req, new Date(at.getTime() + 4 * 60_000))).resolves.toBeNull();
  });

  it("signs with a session token when the credential has one", async () => {
    const req = await signed(credential({ session_token: "FwoGZXIvYXdzEXAMPLETOKEN" }));
    expect(req.headers["x-amz-security-token"]).toBe("FwoGZXIvYXdzEXAMPLETOKEN");
    expect(req.headers.authorization).toContain("x-amz-security-token");
    await expect(verify(req)).resolves.toBeNull();
  });

  it("refuses to sign without a Bedrock credential", async () => {
    const signer = new BedrockSigner({ clock });
    const built = claude.buildRequest(chat({}), bedrockTarget(), false);
    await expect(signer.sign(built, bedrockTarget({ cloud: null }))).rejects.toBeInstanceOf(UpstreamAuthError);
  });
});

describe("role assumption", () => {
  const role = "arn:aws:iam::123456789012:role/bedrock-router";
  let now = new Date("2026-11-27T12:00:00Z");
  const clock = { now: () => now };

  /** An STS stand-in: counts calls, answers keys valid for an hour, or fails when told to. */
  function fakeSts(opts: { fail?: boolean } = {}) {
    const calls: AssumeRoleInput[] = [];
    const sts: RoleAssumer = {
      async assumeRole(input): Promise<AssumedRole> {
        calls.push(input);
        await new Promise((r) => setTimeout(r, 5));
        if (opts.fail) throw new Error("AccessDenied: User is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::123456789012:role/bedrock-router");
        return { accessKeyId: `ASIAROLE${calls.length}`, secretAccessKey: `role-secret-${calls.length}`, sessionToken: `token-${calls.length}`, expiration: new Date(now.getTime() + 3600_000) };
      },
    };
    return { sts, calls };
  }

  beforeEach(() => {
    now = new Date("2026-11-27T12:00:00Z");
  });

  it("asks STS once for concurrent and later requests, and again shortly before the keys expire", async () => {
    const { sts, calls } = fakeSts();
    const signer = new BedrockSigner({ roles: sts, clock });
    const cred = credential({ role_arn: role, external_id: "router-ext" });
    const [a, b] = await Promise.all([signer.keysFor(cred), signer.keysFor(cred)]);
    expect(a).toEqual({ accessKeyId: "ASIAROLE1", secretAccessKey: "role-secret-1", sessionToken: "token-1", expiration: expect.any(Date) });
    expect(b).toBe(a);
    expect(calls).toEqual([{ roleArn: role, externalId: "router-ext", region: "eu-central-1", keys: { accessKeyId: FAKE_AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY } }]);
    now = new Date(now.getTime() + 54 * 60_000);
    expect((await signer.keysFor(cred)).accessKeyId).toBe("ASIAROLE1");
    now = new Date(now.getTime() + 2 * 60_000);
    expect((await signer.keysFor(cred)).accessKeyId).toBe("ASIAROLE2");
    expect(calls).toHaveLength(2);
  });

  it("keeps roles of different credentials apart, and signs with the role's keys", async () => {
    const { sts, calls } = fakeSts();
    const signer = new BedrockSigner({ roles: sts, clock });
    await signer.keysFor(credential({ role_arn: role }));
    await signer.keysFor(credential({ role_arn: role, secret_access_key: "another-secret" }));
    expect(calls).toHaveLength(2);
    const t = bedrockTarget({ cloud: { provider: "bedrock", ...credential({ role_arn: role }) } });
    const req = await signer.sign(claude.buildRequest(chat({}), t, false), t);
    expect(req.headers.authorization).toContain("Credential=ASIAROLE1/");
    expect(req.headers["x-amz-security-token"]).toBe("token-1");
  });

  it("fails with an auth error that keeps STS's words out of its reason, and asks again next time", async () => {
    const failing = fakeSts({ fail: true });
    const signer = new BedrockSigner({ roles: failing.sts, clock });
    const cred = credential({ role_arn: role });
    const err = await signer.keysFor(cred).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamAuthError);
    expect((err as UpstreamAuthError).reason).toBe("assume_role_failed");
    expect((err as Error).message).not.toContain("123456789012");
    await signer.keysFor(cred).catch(() => undefined);
    expect(failing.calls).toHaveLength(2);
  });

  it("does not assume a role for a credential without one", async () => {
    const { sts, calls } = fakeSts();
    const keys = await new BedrockSigner({ roles: sts, clock }).keysFor(credential({ session_token: "tok" }));
    expect(keys).toEqual({ accessKeyId: FAKE_AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY, sessionToken: "tok" });
    expect(calls).toHaveLength(0);
  });
});

describe("the adapters against a fake Bedrock that refuses what Bedrock refuses", () => {
  let fake: FakeBedrock;
  const signer = new BedrockSigner();
  beforeAll(async () => {
    fake = await startFakeBedrock();
  });
  afterAll(() => fake.close());

  const send = async (r: UpstreamHttpRequest) => {
    const res = await fetch(r.url, { method: "POST", headers: r.headers, body: r.body });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
  };
  const at = (overrides: Partial<UpstreamTarget> = {}) => bedrockTarget({ baseUrl: fake.url, ...overrides });

  it("refuses an unsigned request, and the adapter reads the error's type from its header", async () => {
    const res = await send(claude.buildRequest(chat({}), at(), false));
    expect(res.status).toBe(403);
    expect(claude.parseError(res.body.toString(), res.headers)).toEqual({ code: "MissingAuthenticationTokenException", message: "Missing Authentication Token" });
  });

  it("takes a signed Claude request and answers as Anthropic does, and refuses the body Anthropic's own API takes", async () => {
    fake.script({ text: "Signed and served." });
    const t = at();
    const res = await send(await signer.sign(claude.buildRequest(chat({ max_tokens: 30 }), t, false), t));
    expect(res.status).toBe(200);
    expect(claude.parseCompletion(JSON.parse(res.body.toString())).choices[0]?.message.content).toBe("Signed and served.");
    const anthropicBody = { model: "claude-sonnet-4-5-20250929", max_tokens: 30, messages: [{ role: "user", content: "Hi" }] };
    const raw = { url: claude.buildRequest(chat({}), t, false).url, headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(anthropicBody) };
    const refused = await send(await signer.sign(raw, t));
    expect(refused.status).toBe(400);
    expect(claude.parseError(refused.body.toString(), refused.headers)).toMatchObject({ code: "ValidationException", message: expect.stringContaining("extraneous key [model]") });
  });

  it("takes a Converse conversation with tool calls and results, and streams its answer in frames the adapter decodes", async () => {
    fake.script({ chunks: ["All ", "good."], usage: { prompt: 20, completion: 2 } });
    const t = at({ upstreamModel: "mistral.mistral-large-2407-v1:0" });
    const req = chat({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "" },
        { role: "user", content: "And now?" },
      ],
      tools: [{ type: "function", function: { name: "get_weather" } }],
    });
    const res = await send(await signer.sign(converse.buildRequest(req, t, true), t));
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/vnd.amazon.eventstream");
    const got = collect(await decodeFrames(converse, [res.body]));
    expect(got.content).toBe("All good.");
    expect(got.usage).toEqual({ prompt: 20, completion: 2, cached: 0, reasoning: 0 });
  });

  it("refuses a Converse conversation that does not alternate or holds blank text, as Bedrock does", async () => {
    const t = at({ upstreamModel: "mistral.mistral-large-2407-v1:0" });
    const url = converse.buildRequest(chat({}), t, false).url;
    const body = (messages: unknown) => ({ url, headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ messages }) });
    const twice = await send(await signer.sign(body([{ role: "user", content: [{ text: "a" }] }, { role: "user", content: [{ text: "b" }] }]), t));
    expect(twice.status).toBe(400);
    expect(converse.parseError(twice.body.toString(), twice.headers).message).toContain("must alternate");
    const blank = await send(await signer.sign(body([{ role: "user", content: [{ text: " " }] }]), t));
    expect(converse.parseError(blank.body.toString(), blank.headers).message).toContain("is blank");
  });
});
