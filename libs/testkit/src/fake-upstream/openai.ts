import { argumentPieces, replyText, replyUsage, textPieces, toolArguments, type FakeReply, type FakeUpstream, type FakeUpstreamOptions, type RecordedRequest } from "./script";
import { embeddingDimensions, embeddingInputs, fakeEmbedding, fakeEmbeddingTokens, float32Base64 } from "./embeddings";
import { sse, startFakeProvider, type Frame, type ProviderWire } from "./server";

const DEFAULT_CODES: Record<number, [type: string, code: string]> = {
  400: ["invalid_request_error", "invalid_request"],
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["invalid_request_error", "unsupported_country_region_territory"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", "server_error"],
  503: ["server_error", "service_unavailable"],
};

interface OpenAiBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  input?: unknown;
  dimensions?: number;
  encoding_format?: string;
}

const CHAT_PATHS = new Set(["/v1/chat/completions", "/chat/completions"]);
const EMBEDDINGS_PATHS = new Set(["/v1/embeddings", "/embeddings"]);

/** The embeddings API's answer: `{object: "list", data: [{object, index, embedding}], model, usage}`. */
function embeddingsBody(reply: FakeReply, body: OpenAiBody, model: string): unknown {
  const texts = embeddingInputs(body.input);
  const dims = embeddingDimensions(reply, body.dimensions);
  const tokens = fakeEmbeddingTokens(reply, texts);
  return {
    object: "list",
    data: texts.map((t, index) => {
      const v = fakeEmbedding(t, dims);
      return { object: "embedding", index, embedding: body.encoding_format === "base64" ? float32Base64(v) : v };
    }),
    model,
    ...(reply.usage === null ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}

const asBody = (b: unknown): OpenAiBody => (b && typeof b === "object" ? b : {});

function finishOf(reply: FakeReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? "tool_calls" : "stop");
}

function usageBody(reply: FakeReply) {
  const u = replyUsage(reply);
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
    prompt_tokens_details: { cached_tokens: u.cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

const toolCallId = (i: number, id?: string) => id ?? `call_fake${i}`;

/** Where a stream reports usage: nowhere, in a last chunk of its own, or on the finish chunk. */
type StreamUsage = "none" | "own-chunk" | "finish-chunk";

function chatFrames(reply: FakeReply, model: string, usage: StreamUsage): Frame[] {
  const created = Math.floor(Date.now() / 1000);
  const base = { id: "chatcmpl-fake123", object: "chat.completion.chunk", created, model, system_fingerprint: "fp_fake" };
  const reportsUsage = reply.usage !== null;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
  const frames: Frame[] = [{ text: chunk({ role: "assistant", content: "", refusal: null }), content: false }];
  if (reply.reasoning) {
    for (const piece of reply.reasoning.match(/\S+\s*/g) ?? []) frames.push({ text: chunk({ reasoning_content: piece }), content: true });
  }
  for (const piece of textPieces(reply)) frames.push({ text: chunk({ content: piece }), content: true });
  (reply.toolCalls ?? []).forEach((c, i) => {
    frames.push({
      text: chunk({ tool_calls: [{ index: i, id: toolCallId(i, c.id), type: "function", function: { name: c.name, arguments: "" } }] }),
      content: true,
    });
    for (const piece of argumentPieces(c)) {
      frames.push({ text: chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }), content: true });
    }
  });
  const finishUsage = usage === "finish-chunk" && reportsUsage ? { usage: usageBody(reply) } : {};
  frames.push({ text: chunk({}, finishOf(reply), finishUsage), content: false });
  if (usage === "own-chunk" && reportsUsage) frames.push({ text: sse({ ...base, choices: [], usage: usageBody(reply) }), content: false });
  frames.push({ text: sse("[DONE]"), content: false });
  return frames;
}

/** OpenAI Chat Completions (and every OpenAI-compatible server): JSON and SSE; and its embeddings API. */
export const openAiWire: ProviderWire = {
  basePath: "/v1",
  route(method, path, _query, body) {
    if (method !== "POST" || !(CHAT_PATHS.has(path) || EMBEDDINGS_PATHS.has(path))) return null;
    const b = asBody(body);
    return { stream: CHAT_PATHS.has(path) && b.stream === true, model: b.model ?? "unknown" };
  },
  reject(req: RecordedRequest) {
    const auth = req.headers["authorization"] ?? "";
    if (!auth.startsWith("Bearer ") || auth.length <= 7) return { status: 401, code: "invalid_api_key", message: "You didn't provide an API key." };
    return completionBoundRefusal(asBody(req.body));
  },
  errorBody(status, code, message) {
    const [type, defaultCode] = DEFAULT_CODES[status] ?? (status >= 500 ? ["server_error", "server_error"] : ["invalid_request_error", "invalid_request"]);
    return { error: { message: message ?? `fake upstream error ${status}`, type, param: null, code: code ?? defaultCode } };
  },
  json(reply, req, model) {
    if (EMBEDDINGS_PATHS.has(req.path)) return embeddingsBody(reply, asBody(req.body), model);
    const text = replyText(reply);
    const message: Record<string, unknown> = { role: "assistant", content: text || (reply.toolCalls?.length ? null : ""), refusal: null };
    if (reply.reasoning) message.reasoning_content = reply.reasoning;
    if (reply.toolCalls?.length) {
      message.tool_calls = reply.toolCalls.map((c, i) => ({
        id: toolCallId(i, c.id),
        type: "function",
        function: { name: c.name, arguments: toolArguments(c) },
      }));
    }
    return {
      id: "chatcmpl-fake123",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      system_fingerprint: "fp_fake",
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(reply) }],
      ...(reply.usage === null ? {} : { usage: usageBody(reply) }),
    };
  },
  frames(reply, req, model) {
    // OpenAI reports stream usage only when asked, in a chunk of its own with no choices.
    return chatFrames(reply, model, asBody(req.body).stream_options?.include_usage ? "own-chunk" : "none");
  },
  errorFrame(code, message) {
    return sse({ error: { message: message ?? "The server had an error while processing your request.", type: "server_error", param: null, code: code ?? "server_error" } });
  },
};

/**
 * The top-level fields OpenAI's chat completions API takes (its API reference); it refuses any
 * other with a 400 "Unrecognized request argument supplied: <name>".
 */
const OPENAI_CHAT_FIELDS = new Set([
  "model",
  "messages",
  "audio",
  "frequency_penalty",
  "function_call",
  "functions",
  "logit_bias",
  "logprobs",
  "max_completion_tokens",
  "max_tokens",
  "metadata",
  "modalities",
  "n",
  "parallel_tool_calls",
  "prediction",
  "presence_penalty",
  "prompt_cache_key",
  "prompt_cache_retention",
  "reasoning_effort",
  "response_format",
  "safety_identifier",
  "seed",
  "service_tier",
  "stop",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "user",
  "verbosity",
  "web_search_options",
]);

/** OpenAI itself: also refuses a chat completions field it does not know, as the real API does. */
const strictOpenAiWire: ProviderWire = {
  ...openAiWire,
  reject(req) {
    const refused = openAiWire.reject?.(req);
    if (refused || !CHAT_PATHS.has(req.path)) return refused ?? null;
    const unknown = Object.keys(asBody(req.body)).find((k) => !OPENAI_CHAT_FIELDS.has(k));
    return unknown === undefined ? null : { status: 400, code: "invalid_request", message: `Unrecognized request argument supplied: ${unknown}` };
  },
};

/** The most completion tokens OpenAI's API allows per model (its published limits); other models: no limit here. */
const MAX_COMPLETION_TOKENS: Record<string, number> = { "gpt-4o": 16384, "gpt-4o-mini": 16384, "gpt-4.1": 32768, "gpt-4.1-mini": 32768, "gpt-4.1-nano": 32768 };

/** OpenAI refuses a completion bound above the model's limit (a 400 naming the field). */
function completionBoundRefusal(b: { model?: string; max_tokens?: unknown; max_completion_tokens?: unknown }) {
  const limit = MAX_COMPLETION_TOKENS[b.model ?? ""];
  for (const field of ["max_completion_tokens", "max_tokens"] as const) {
    const asked = b[field];
    if (limit !== undefined && typeof asked === "number" && asked > limit) {
      const message = `${field} is too large: ${asked}. This model supports at most ${limit} completion tokens, whereas you provided ${asked}.`;
      return { status: 400, code: "invalid_value", message };
    }
  }
  return null;
}

/**
 * Top-level fields Mistral's chat completions take; its API forbids any other with a 422
 * (pydantic's `extra_forbidden`), `stream_options` included.
 */
const MISTRAL_FIELDS = new Set([
  "model",
  "messages",
  "temperature",
  "top_p",
  "max_tokens",
  "stream",
  "stop",
  "random_seed",
  "metadata",
  "response_format",
  "tools",
  "tool_choice",
  "presence_penalty",
  "frequency_penalty",
  "n",
  "prediction",
  "parallel_tool_calls",
  "prompt_mode",
  "safe_prompt",
]);
const MISTRAL_ROLES = new Set(["system", "user", "assistant", "tool"]);

interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

/** What Mistral's request validation refuses in a body: unknown fields and roles, `name` off tool messages. */
function mistralIssues(body: unknown): ValidationIssue[] {
  if (!body || typeof body !== "object") return [];
  const b = body as Record<string, unknown>;
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(b)) {
    if (!MISTRAL_FIELDS.has(key)) issues.push({ type: "extra_forbidden", loc: ["body", key], msg: "Extra inputs are not permitted", input: value });
  }
  (Array.isArray(b.messages) ? (b.messages as unknown[]) : []).forEach((raw, i) => {
    const m = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
    const role = String(m.role);
    if (!MISTRAL_ROLES.has(role)) {
      issues.push({
        type: "union_tag_invalid",
        loc: ["body", "messages", i],
        msg: `Input tag '${role}' found using 'role' does not match any of the expected tags: 'assistant', 'system', 'tool', 'user'`,
        input: m,
      });
    } else if (role !== "tool" && "name" in m) {
      issues.push({ type: "extra_forbidden", loc: ["body", "messages", i, role, "name"], msg: "Extra inputs are not permitted", input: m.name });
    }
  });
  return issues;
}

/**
 * Mistral as the fake plays it: its request validation (a 422 with pydantic's details in Mistral's
 * error envelope), and usage on the finish chunk of every stream, unasked.
 */
const mistralWire: ProviderWire = {
  ...openAiWire,
  reject(req) {
    const unauthorized = openAiWire.reject?.(req);
    if (unauthorized) return unauthorized;
    const detail = mistralIssues(req.body);
    if (!detail.length) return null;
    const body = { object: "error", message: { detail }, type: "invalid_request_error", param: null, code: null };
    return { status: 422, code: "extra_forbidden", message: "Extra inputs are not permitted", body };
  },
  frames(reply, _req, model) {
    return chatFrames(reply, model, "finish-chunk");
  },
};

export interface FakeOpenAiOptions extends FakeUpstreamOptions {
  /**
   * `openai` (the default) refuses a chat completions field OpenAI's API does not take with its 400
   * ("Unrecognized request argument supplied: <name>"). `compatible` plays a server that takes
   * fields of its own (`top_k` on Together, vLLM, ...) and ignores others. `mistral` validates like
   * Mistral's API: an unknown top-level field (such as `stream_options`), the `developer` role or
   * `name` on a non-tool message gets its 422; stream usage comes unasked.
   */
  flavour?: "openai" | "compatible" | "mistral";
}

/** Starts a fake OpenAI-compatible provider; `url` ends in `/v1` like `https://api.openai.com/v1`. */
export function startFakeOpenAi(opts: FakeOpenAiOptions = {}): Promise<FakeUpstream> {
  const { flavour, ...serverOpts } = opts;
  const wire = flavour === "mistral" ? mistralWire : flavour === "compatible" ? openAiWire : strictOpenAiWire;
  return startFakeProvider(wire, serverOpts);
}
