import { createHash } from "node:crypto";
import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec";
import { Hash } from "@smithy/hash-node";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { anthropicWire } from "./anthropic";
import { fakeEmbedding } from "./embeddings";
import { argumentPieces, replyText, replyUsage, textPieces, toolArguments, type FakeFailure, type FakeReply, type FakeUpstream, type FakeUpstreamOptions, type RecordedRequest } from "./script";
import { startFakeProvider, type Frame, type ProviderWire, type Rejection } from "./server";

/** The keys a test's Bedrock credential carries; the fake knows them unless told other keys. */
export const FAKE_AWS_ACCESS_KEY_ID = "AKIAFAKEBEDROCK0TEST";
export const FAKE_AWS_SECRET_ACCESS_KEY = "fakeSecretKey/ForTheBedrockFake+0123456789ab";

/** How far the signing time may be from the fake's clock, as AWS allows. */
const MAX_SKEW_MS = 5 * 60_000;
const SIGNATURE_MISMATCH =
  "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

export interface FakeBedrockOptions extends FakeUpstreamOptions {
  /** Access key id → secret access key the fake accepts; default the test keys above. */
  keys?: Record<string, string>;
  /** Regions the account has Bedrock in; a signature scoped to another is refused. */
  regions?: string[];
  /** The fake's clock, for signature times. */
  now?: () => Date;
}

export interface FakeBedrock extends FakeUpstream {
  regions: string[];
  /** Every request to `region` fails this way until cleared with null (a throttled region). */
  failRegion(region: string, failure: Extract<FakeFailure, { kind: "status" }> | null): void;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The region a request was signed for (its credential scope), or null when it carries no signature. */
export function bedrockRegionOf(req: RecordedRequest): string | null {
  return /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(req.headers.authorization ?? "")?.[1] ?? null;
}

const DEFAULT_CODES: Record<number, string> = {
  400: "ValidationException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  408: "ModelTimeoutException",
  424: "ModelErrorException",
  429: "ThrottlingException",
  500: "InternalServerException",
  503: "ServiceUnavailableException",
};

const DEFAULT_MESSAGES: Record<string, string> = {
  ThrottlingException: "Too many requests, please wait before trying again.",
  ServiceUnavailableException: "Bedrock is unable to process your request.",
};

const refuse = (status: number, code: string, message: string): Rejection => ({ status, code, message });
const invalid = (message: string): Rejection => refuse(400, "ValidationException", message);

type SigV4Parts = { keyId: string; date: string; region: string; service: string; signedHeaders: string[] };

function authorizationParts(header: string): SigV4Parts | null {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(header);
  if (!m) return null;
  return { keyId: m[1]!, date: m[2]!, region: m[3]!, service: m[4]!, signedHeaders: m[5]!.split(";") };
}

function amzDate(text: string | undefined): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? "");
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : null;
}

/**
 * Checks a request's SigV4 signature as AWS does, by signing the request as received again with
 * the secret the fake knows for its access key (the same library the gateway signs with), over the
 * headers it says it signed, the path as sent and the body's bytes. Also refuses a signing time more
 * than five minutes off, a scope for another service, and a region the account does not have.
 * Returns the refusal Bedrock answers, or null when the signature holds.
 */
export async function verifyBedrockSignature(
  req: Pick<RecordedRequest, "method" | "path" | "query" | "headers" | "rawBody">,
  opts: { keys: Record<string, string>; regions: readonly string[]; now: Date },
): Promise<Rejection | null> {
  const header = req.headers.authorization;
  if (!header) return refuse(403, "MissingAuthenticationTokenException", "Missing Authentication Token");
  const parts = authorizationParts(header);
  if (!parts) return refuse(403, "IncompleteSignatureException", "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature'.");
  const secret = opts.keys[parts.keyId];
  if (secret === undefined) return refuse(403, "UnrecognizedClientException", "The security token included in the request is invalid.");
  if (parts.service !== "bedrock") return refuse(403, "InvalidSignatureException", `Credential should be scoped to correct service: 'bedrock'.`);
  if (!opts.regions.includes(parts.region)) return refuse(403, "InvalidSignatureException", "Credential should be scoped to a valid region.");
  const signedAt = amzDate(req.headers["x-amz-date"]);
  if (!signedAt || !parts.signedHeaders.includes("x-amz-date") || !parts.signedHeaders.includes("host")) {
    return refuse(403, "IncompleteSignatureException", "Signature must name the host and x-amz-date headers and x-amz-date must be an ISO 8601 basic date.");
  }
  if (Math.abs(opts.now.getTime() - signedAt.getTime()) > MAX_SKEW_MS) {
    return refuse(403, "InvalidSignatureException", `Signature expired: ${req.headers["x-amz-date"]} is now earlier or later than the allowed five minutes.`);
  }
  // The service hashes the body it received; a signed hash of other bytes does not hold.
  const bodyHash = createHash("sha256").update(req.rawBody ?? "", "utf8").digest("hex");
  const claimed = req.headers["x-amz-content-sha256"];
  if (claimed !== undefined && claimed !== bodyHash) return refuse(403, "InvalidSignatureException", SIGNATURE_MISMATCH);
  const headers: Record<string, string> = {};
  for (const name of parts.signedHeaders) {
    const value = req.headers[name];
    if (value === undefined) return refuse(403, "InvalidSignatureException", SIGNATURE_MISMATCH);
    headers[name] = value;
  }
  const token = req.headers["x-amz-security-token"];
  const signer = new SignatureV4({
    service: parts.service,
    region: parts.region,
    credentials: { accessKeyId: parts.keyId, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) },
    sha256: Hash.bind(null, "sha256"),
  });
  const signed = await signer.sign(
    new HttpRequest({ method: req.method, protocol: "http:", hostname: "fake", path: req.path, query: req.query, headers, body: req.rawBody ?? "" }),
    { signingDate: signedAt },
  );
  return signed.headers.authorization === header ? null : refuse(403, "InvalidSignatureException", SIGNATURE_MISMATCH);
}

type Route = { kind: "invoke" | "converse" | "embeddings"; stream: boolean; model: string };

const isEmbeddingsModel = (model: string): boolean => /^(?:[a-z]{2,4}\.)?(?:amazon\.titan-embed|cohere\.embed)/.test(model);
const isClaude = (model: string): boolean => /^(?:[a-z]{2,4}\.)?anthropic\.claude/.test(model);

/** `/model/{modelId}/{action}`, the model id as the SDK encodes it (`:` as `%3A`). */
function routeOf(method: string, path: string): Route | null {
  const m = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(path);
  if (method !== "POST" || !m) return null;
  let model: string;
  try {
    model = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  const action = m[2]!;
  if (action === "converse" || action === "converse-stream") return { kind: "converse", stream: action === "converse-stream", model };
  if (isEmbeddingsModel(model)) return action === "invoke" ? { kind: "embeddings", stream: false, model } : null;
  return { kind: "invoke", stream: action === "invoke-with-response-stream", model };
}

/** Anthropic's own model name for a Bedrock id, as Bedrock reports it in Claude's answers. */
const anthropicName = (model: string): string => model.replace(/^(?:[a-z]{2,4}\.)?anthropic\./, "").replace(/-v\d+(?::\d+)?$/, "");

/**
 * The request as the Anthropic fake reads it: the model named in its body, and the account (the
 * access key) where the Anthropic API has its key, so that prompt caching is per account.
 */
const asAnthropicRequest = (req: RecordedRequest, model: string): RecordedRequest => {
  const keyId = /Credential=([^/]+)\//.exec(req.headers.authorization ?? "")?.[1] ?? "";
  return { ...req, headers: { ...req.headers, "x-api-key": keyId }, body: { ...(isObject(req.body) ? req.body : {}), model: anthropicName(model) } };
};

/** What InvokeModel refuses of a Claude body: Anthropic's own rules, and Bedrock's (no model or stream, its API version). */
function claudeRefusal(body: unknown): Rejection | null {
  if (!isObject(body)) return invalid("Malformed input request, please reformat your input and try again.");
  for (const key of ["model", "stream"]) if (key in body) return invalid(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
  if (body.anthropic_version !== "bedrock-2023-05-31") return invalid("Malformed input request: #: required key [anthropic_version] not found or invalid, please reformat your input and try again.");
  if (body.anthropic_beta !== undefined && !(Array.isArray(body.anthropic_beta) && body.anthropic_beta.every((b) => typeof b === "string"))) {
    return invalid("Malformed input request: #/anthropic_beta: expected type: JSONArray, please reformat your input and try again.");
  }
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) return invalid("Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.");
  const messages = Array.isArray(body.messages) ? body.messages : null;
  if (!messages?.length) return invalid("Malformed input request: #: required key [messages] not found, please reformat your input and try again.");
  for (const [i, m] of messages.entries()) {
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant")) return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
  }
  return null;
}

const CONVERSE_FIELDS = new Set(["messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig", "additionalModelRequestFields", "additionalModelResponseFieldPaths", "promptVariables", "requestMetadata", "performanceConfig"]);
const INFERENCE_FIELDS = new Set(["maxTokens", "temperature", "topP", "stopSequences"]);
const BLOCK_KINDS = new Set(["text", "image", "document", "video", "toolUse", "toolResult", "guardContent", "cachePoint", "reasoningContent"]);

/** What Converse refuses: the shapes its validation names, in its words. */
function converseRefusal(body: unknown): Rejection | null {
  if (!isObject(body)) return invalid("Malformed request body");
  const extra = Object.keys(body).find((k) => !CONVERSE_FIELDS.has(k));
  if (extra) return invalid(`1 validation error detected: Unknown field '${extra}'`);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (!messages.length) return invalid("A conversation must start with a user message. Try again with a conversation that starts with a user message.");
  let usesTools = false;
  let previous: unknown = null;
  for (const [i, m] of messages.entries()) {
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant")) return invalid(`Value at 'messages.${i + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`);
    if (i === 0 && m.role !== "user") return invalid("A conversation must start with a user message. Try again with a conversation that starts with a user message.");
    if (m.role === previous) return invalid("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.");
    previous = m.role;
    const content = Array.isArray(m.content) ? m.content : [];
    if (!content.length) return invalid(`The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`);
    for (const block of content) {
      const kinds = isObject(block) ? Object.keys(block) : [];
      if (kinds.length !== 1 || !BLOCK_KINDS.has(kinds[0]!)) return invalid(`The ContentBlock object at messages.${i}.content is not valid.`);
      if (isObject(block) && "text" in block && (typeof block.text !== "string" || !block.text.trim())) {
        return invalid(`The text field in the ContentBlock object at messages.${i}.content is blank. Add text to the text field, and try again.`);
      }
      if (isObject(block) && ("toolUse" in block || "toolResult" in block)) usesTools = true;
    }
  }
  const inference = body.inferenceConfig;
  if (inference !== undefined) {
    if (!isObject(inference)) return invalid("inferenceConfig must be an object");
    const unknown = Object.keys(inference).find((k) => !INFERENCE_FIELDS.has(k));
    if (unknown) return invalid(`1 validation error detected: Unknown field 'inferenceConfig.${unknown}'`);
    if (inference.temperature !== undefined && (typeof inference.temperature !== "number" || inference.temperature < 0 || inference.temperature > 1)) {
      return invalid("1 validation error detected: Value at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1");
    }
  }
  if (usesTools && !isObject(body.toolConfig)) return invalid("The toolConfig field must be defined when using toolUse and toolResult content blocks.");
  return null;
}

/** What InvokeModel refuses of a Titan or Cohere embeddings body. */
function embeddingsRefusal(model: string, body: unknown): Rejection | null {
  if (!isObject(body)) return invalid("Malformed input request, please reformat your input and try again.");
  if (model.includes("titan-embed")) {
    const extra = Object.keys(body).find((k) => !["inputText", "dimensions", "normalize", "embeddingTypes"].includes(k));
    if (extra) return invalid(`Malformed input request: #: extraneous key [${extra}] is not permitted, please reformat your input and try again.`);
    if (typeof body.inputText !== "string" || !body.inputText) return invalid("Malformed input request: #: required key [inputText] not found, please reformat your input and try again.");
    if (body.dimensions !== undefined && ![256, 512, 1024].includes(body.dimensions as number)) return invalid("Malformed input request: #/dimensions: 8 is not a valid enum value, please reformat your input and try again.");
    return null;
  }
  const texts = body.texts;
  if (!Array.isArray(texts) || !texts.length || texts.length > 96 || !texts.every((t) => typeof t === "string")) return invalid("Malformed input request: #/texts: expected between 1 and 96 strings, please reformat your input and try again.");
  if (typeof body.input_type !== "string") return invalid("Malformed input request: #: required key [input_type] not found, please reformat your input and try again.");
  return null;
}

const stopOf = (reply: FakeReply) => reply.finishReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn");
const toolUseId = (i: number, id?: string) => id ?? `tooluse_fake${i}`;

function converseUsage(reply: FakeReply) {
  const u = replyUsage(reply);
  const written = u.cacheWrite5m + u.cacheWrite1h;
  const input = u.prompt - u.cached - written;
  return {
    inputTokens: input,
    outputTokens: u.completion,
    totalTokens: u.prompt + u.completion,
    ...(u.cached ? { cacheReadInputTokens: u.cached } : {}),
    ...(written ? { cacheWriteInputTokens: written } : {}),
  };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const eventFrame = (eventType: string, payload: unknown): Uint8Array =>
  codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });

/** An exception frame, as Bedrock ends a stream that failed (`throttlingException`, `modelStreamErrorException`). */
export function bedrockExceptionFrame(exceptionType: string, message: string): Uint8Array {
  const headers: MessageHeaders = {
    ":exception-type": { type: "string", value: exceptionType },
    ":content-type": { type: "string", value: "application/json" },
    ":message-type": { type: "string", value: "exception" },
  };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) });
}

/** One Anthropic stream event as InvokeModelWithResponseStream carries it: `{"bytes": base64}` in a `chunk` event. */
export function bedrockChunkFrame(anthropicEvent: unknown): Uint8Array {
  return eventFrame("chunk", { bytes: Buffer.from(JSON.stringify(anthropicEvent)).toString("base64") });
}

/** Re-frames the Anthropic fake's SSE stream as Bedrock's chunk events; the last one carries Bedrock's metrics. */
function claudeFrames(reply: FakeReply, req: RecordedRequest, model: string): Frame[] {
  const usage = replyUsage(reply);
  return anthropicWire.frames(reply, asAnthropicRequest(req, model), anthropicName(model)).map((frame) => {
    const data = /^data: (.*)$/m.exec(typeof frame.text === "string" ? frame.text : "")?.[1] ?? "{}";
    const event = JSON.parse(data) as Record<string, unknown>;
    if (event.type === "message_stop") {
      event["amazon-bedrock-invocationMetrics"] = { inputTokenCount: usage.prompt, outputTokenCount: usage.completion, invocationLatency: 100, firstByteLatency: 20 };
    }
    return { text: bedrockChunkFrame(event), content: frame.content };
  });
}

function converseFrames(reply: FakeReply): Frame[] {
  const frames: Frame[] = [{ text: eventFrame("messageStart", { role: "assistant" }), content: false }];
  let index = 0;
  const pieces = textPieces(reply);
  if (pieces.length) {
    for (const text of pieces) frames.push({ text: eventFrame("contentBlockDelta", { contentBlockIndex: index, delta: { text } }), content: true });
    frames.push({ text: eventFrame("contentBlockStop", { contentBlockIndex: index }), content: false });
    index++;
  }
  (reply.toolCalls ?? []).forEach((c, i) => {
    frames.push({ text: eventFrame("contentBlockStart", { contentBlockIndex: index, start: { toolUse: { toolUseId: toolUseId(i, c.id), name: c.name } } }), content: true });
    for (const input of argumentPieces(c)) frames.push({ text: eventFrame("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input } } }), content: true });
    frames.push({ text: eventFrame("contentBlockStop", { contentBlockIndex: index }), content: false });
    index++;
  });
  frames.push({ text: eventFrame("messageStop", { stopReason: stopOf(reply) }), content: false });
  frames.push({ text: eventFrame("metadata", { usage: converseUsage(reply), metrics: { latencyMs: 100 } }), content: false });
  return frames;
}

function converseJson(reply: FakeReply): unknown {
  const content: unknown[] = [];
  const text = replyText(reply);
  if (text) content.push({ text });
  (reply.toolCalls ?? []).forEach((c, i) => content.push({ toolUse: { toolUseId: toolUseId(i, c.id), name: c.name, input: JSON.parse(toolArguments(c)) as unknown } }));
  return { output: { message: { role: "assistant", content } }, stopReason: stopOf(reply), usage: converseUsage(reply), metrics: { latencyMs: 100 } };
}

function embeddingsJson(reply: FakeReply, model: string, body: Record<string, unknown>): unknown {
  if (model.includes("titan-embed")) {
    const text = String(body.inputText);
    const dimensions = typeof body.dimensions === "number" ? body.dimensions : (reply.embeddingDimensions ?? 1024);
    return { embedding: fakeEmbedding(text, dimensions), inputTextTokenCount: reply.usage?.prompt ?? (text.match(/\S+/g)?.length ?? 0) };
  }
  const texts = (body.texts as string[]) ?? [];
  return { id: "fake-embed-id", response_type: "embeddings_floats", texts, embeddings: texts.map((t) => fakeEmbedding(t, reply.embeddingDimensions ?? 1024)) };
}

/**
 * Amazon Bedrock's runtime API on one loopback address for every region (the region is the
 * signature's scope): InvokeModel with Claude's Messages body (JSON, and event-stream chunks of
 * Anthropic events), Converse and ConverseStream, Titan and Cohere embeddings. Every request must be
 * signed with SigV4 by a key the fake knows, for a region it has; bodies are refused as Bedrock
 * refuses them. Errors are `{"message"}` with the type in `x-amzn-errortype`; a failed stream ends
 * in an exception frame.
 */
export function bedrockWire(opts: { keys: Record<string, string>; regions: readonly string[]; now: () => Date; failing: Map<string, Extract<FakeFailure, { kind: "status" }>> }): ProviderWire {
  return {
    basePath: "",
    streamContentType: "application/vnd.amazon.eventstream",
    route(method, path) {
      const r = routeOf(method, path);
      return r ? { stream: r.stream, model: r.model } : null;
    },
    async reject(req) {
      const unsigned = await verifyBedrockSignature(req, { keys: opts.keys, regions: opts.regions, now: opts.now() });
      if (unsigned) return unsigned;
      const failure = opts.failing.get(bedrockRegionOf(req) ?? "");
      if (failure) return refuse(failure.status, failure.code ?? DEFAULT_CODES[failure.status] ?? "InternalServerException", failure.message ?? DEFAULT_MESSAGES[failure.code ?? DEFAULT_CODES[failure.status] ?? ""] ?? "fake failure");
      const route = routeOf(req.method, req.path)!;
      if (route.kind === "embeddings") return embeddingsRefusal(route.model, req.body);
      if (route.kind === "converse") return converseRefusal(req.body);
      if (!isClaude(route.model)) return invalid(`The fake serves Claude only through InvokeModel, not ${route.model}.`);
      return claudeRefusal(req.body);
    },
    errorBody(status, code, message) {
      const type = code ?? DEFAULT_CODES[status] ?? (status >= 500 ? "InternalServerException" : "ValidationException");
      return { message: message ?? DEFAULT_MESSAGES[type] ?? `fake upstream error ${status}` };
    },
    errorHeaders(status, code) {
      const type = code ?? DEFAULT_CODES[status] ?? (status >= 500 ? "InternalServerException" : "ValidationException");
      return { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": "00000000-0000-4000-8000-000000000000" };
    },
    json(reply, req, model) {
      const route = routeOf(req.method, req.path)!;
      if (route.kind === "embeddings") return embeddingsJson(reply, route.model, isObject(req.body) ? req.body : {});
      if (route.kind === "converse") return converseJson(reply);
      const answer = anthropicWire.json(reply, asAnthropicRequest(req, model), anthropicName(model)) as Record<string, unknown>;
      return { ...answer, id: "msg_bdrk_fake123" };
    },
    frames(reply, req, model) {
      return routeOf(req.method, req.path)?.kind === "converse" ? converseFrames(reply) : claudeFrames(reply, req, model);
    },
    errorFrame(code, message) {
      return bedrockExceptionFrame(code ?? "modelStreamErrorException", message ?? "The model stream failed.");
    },
  };
}

/** Starts a fake Bedrock runtime; `url` is its root (the catalog's `https://bedrock-runtime.{region}.amazonaws.com`). */
export async function startFakeBedrock(opts: FakeBedrockOptions = {}): Promise<FakeBedrock> {
  const regions = opts.regions ?? ["eu-central-1", "eu-west-1", "us-east-1", "us-west-2"];
  const failing = new Map<string, Extract<FakeFailure, { kind: "status" }>>();
  const wire = bedrockWire({ keys: opts.keys ?? { [FAKE_AWS_ACCESS_KEY_ID]: FAKE_AWS_SECRET_ACCESS_KEY }, regions, now: opts.now ?? (() => new Date()), failing });
  const fake = await startFakeProvider(wire, opts);
  return {
    ...fake,
    regions,
    failRegion: (region, failure) => void (failure ? failing.set(region, failure) : failing.delete(region)),
  };
}
