import { createHash } from "node:crypto";
import { promptCacheUse } from "./anthropic-prompt-cache";
import { argumentPieces, replyText, replyUsage, textPieces, toolArguments, type FakeReply, type FakeUpstream, type FakeUpstreamOptions, type RecordedRequest } from "./script";
import { sse, startFakeProvider, type Frame, type ProviderWire } from "./server";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

const stopOf = (reply: FakeReply) => reply.finishReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn");
const toolId = (i: number, id?: string) => id ?? `toolu_fake${i}`;

/**
 * Usage as Anthropic reports it: `input_tokens` without cache reads and writes, which come apart
 * (writes also per TTL). Cache counts scripted in the reply win; otherwise the request's
 * `cache_control` markers decide them (anthropic-prompt-cache.ts).
 */
function usageOf(reply: FakeReply, req: RecordedRequest) {
  const u = replyUsage(reply);
  const scripted = reply.usage?.cached !== undefined || u.cacheWrite5m > 0 || u.cacheWrite1h > 0;
  const marked = scripted ? null : promptCacheUse(req);
  const read = marked ? marked.read : u.cached;
  const write5m = marked ? marked.write5m : u.cacheWrite5m;
  const write1h = marked ? marked.write1h : u.cacheWrite1h;
  const prompt = marked ? Math.max(reply.usage?.prompt ?? fakeTokenCount(isObject(req.body) ? req.body : {}), read + write5m + write1h) : u.prompt;
  const searches = (reply.anthropicContent ?? []).filter((b) => b.type === "server_tool_use" && b.name === "web_search").length;
  return {
    ...(searches ? { server_tool_use: { web_search_requests: searches } } : {}),
    input_tokens: prompt - read - write5m - write1h,
    cache_creation_input_tokens: write5m + write1h,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h },
    output_tokens: u.completion,
  };
}

/**
 * The signature the fake gives a thinking block: derived from its text, so an echoed block whose
 * text or signature was altered is refused, as the real API refuses a block it did not sign.
 */
export function fakeThinkingSignature(thinking: string): string {
  return `fakesig_${createHash("sha256").update(thinking).digest("base64url").slice(0, 32)}`;
}

export type Refusal = { status: number; code: string; message: string };
const invalidRequest = (message: string): Refusal => ({ status: 400, code: "invalid_request_error", message });
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const blocksOf = (message: unknown): unknown[] => (isObject(message) && Array.isArray(message.content) ? message.content : []);
const blockType = (block: unknown): unknown => (isObject(block) ? block.type : undefined);

/** The most output tokens the real API allows per model (Anthropic's published limits); other models: no limit here. */
const MAX_OUTPUT: Record<string, number> = {
  "claude-3-5-haiku-20241022": 8192,
  "claude-sonnet-4-20250514": 64000,
  "claude-sonnet-4-5-20250929": 64000,
  "claude-haiku-4-5-20251001": 64000,
  "claude-opus-4-20250514": 32000,
  "claude-opus-4-1-20250805": 32000,
};
/** Models before Claude 4.6: a fixed thinking budget only; adaptive thinking and effort are refused. */
const BUDGET_ONLY = /^claude-(?:3|(?:opus|sonnet|haiku)-4(?:-[015])?(?:-\d{8}|$))/;

/**
 * What the real Messages API refuses that matters to the router: a missing max_tokens or one above
 * the model's limit, a role other than user or assistant, thinking rules, forged thinking.
 */
export function refusalOf(body: unknown): Refusal | null {
  const b = isObject(body) ? body : {};
  if (b.max_tokens === undefined) return invalidRequest("max_tokens: Field required");
  if (typeof b.max_tokens !== "number" || !Number.isInteger(b.max_tokens) || b.max_tokens < 1) {
    return invalidRequest("max_tokens: Input should be a valid integer greater than or equal to 1");
  }
  const model = typeof b.model === "string" ? b.model : "";
  const limit = MAX_OUTPUT[model];
  if (limit !== undefined && b.max_tokens > limit) {
    return invalidRequest(`max_tokens: ${b.max_tokens} > ${limit}, which is the maximum allowed number of output tokens for ${model}`);
  }
  if (BUDGET_ONLY.test(model)) {
    if (isObject(b.thinking) && b.thinking.type === "adaptive") return invalidRequest(`thinking.type: adaptive thinking is not supported on ${model}`);
    if (isObject(b.output_config) && b.output_config.effort !== undefined) return invalidRequest(`output_config.effort: not supported on ${model}`);
  }
  const messages = Array.isArray(b.messages) ? b.messages : [];
  for (const [i, message] of messages.entries()) {
    if (!isObject(message) || (message.role !== "user" && message.role !== "assistant")) {
      return invalidRequest(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    for (const [j, block] of blocksOf(message).entries()) {
      if (!isObject(block) || block.type !== "thinking") continue;
      if (typeof block.thinking !== "string" || block.signature !== fakeThinkingSignature(block.thinking)) {
        return invalidRequest(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
    }
  }
  if (!isObject(b.thinking) || b.thinking.type !== "enabled") return null;
  const budget = b.thinking.budget_tokens;
  if (typeof budget !== "number" || budget < 1024) return invalidRequest("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
  if (b.max_tokens <= budget) return invalidRequest("`max_tokens` must be greater than `thinking.budget_tokens`");
  const i = messages.map((m) => isObject(m) && m.role).lastIndexOf("assistant");
  const blocks = blocksOf(messages[i]);
  const first = blockType(blocks[0]);
  if (blocks.some((block) => blockType(block) === "tool_use") && first !== "thinking" && first !== "redacted_thinking") {
    return invalidRequest(
      `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. ` +
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
    );
  }
  return null;
}

const parseArgs = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
};

/** The fake's token count of a body: about four characters a token over what the count takes. */
export function fakeTokenCount(body: Record<string, unknown>): number {
  return Math.ceil(JSON.stringify([body.system ?? null, body.messages ?? null, body.tools ?? null]).length / 4);
}

/** The fields `POST /v1/messages/count_tokens` takes; any other is refused, as the real API does. */
const COUNT_FIELDS = new Set(["model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers", "context_management", "output_config", "output_format"]);

function countTokens(body: unknown): { status: number; body: unknown } {
  const b = isObject(body) ? body : {};
  const refuse = (message: string) => ({ status: 400, body: { type: "error", error: { type: "invalid_request_error", message } } });
  const extra = Object.keys(b).find((k) => !COUNT_FIELDS.has(k));
  if (extra) return refuse(`${extra}: Extra inputs are not permitted`);
  if (typeof b.model !== "string") return refuse("model: Field required");
  if (!Array.isArray(b.messages)) return refuse("messages: Field required");
  if (b.messages.some((m) => isObject(m) && m.role === "system")) return refuse('messages.0.role: Input should be "user" or "assistant"');
  return { status: 200, body: { input_tokens: fakeTokenCount(b) } };
}

/**
 * One content block as Anthropic streams it: its start (text and input empty), then its deltas
 * (citations before the text they cite, input as JSON, thinking and its signature); blocks that
 * arrive whole (server-tool results) are all in their start.
 */
function streamedBlock(b: Record<string, unknown>): [start: unknown, deltas: unknown[], contentStart: boolean] {
  switch (b.type) {
    case "text": {
      const citations = Array.isArray(b.citations) ? b.citations : [];
      const text = typeof b.text === "string" ? b.text : "";
      const deltas = [...citations.map((citation) => ({ type: "citations_delta", citation })), ...(text.match(/\S+\s*|\s+/g) ?? []).map((t) => ({ type: "text_delta", text: t }))];
      return [{ type: "text", text: "" }, deltas, false];
    }
    case "tool_use":
    case "server_tool_use":
      return [{ ...b, input: {} }, [{ type: "input_json_delta", partial_json: JSON.stringify(b.input ?? {}) }], true];
    case "thinking":
      return [{ type: "thinking", thinking: "", signature: "" }, [{ type: "thinking_delta", thinking: b.thinking }, { type: "signature_delta", signature: b.signature }], false];
    default:
      return [b, [], true];
  }
}

/** Anthropic Messages API: JSON and SSE (message_start … message_stop, with ping). */
export const anthropicWire: ProviderWire = {
  basePath: "/v1",
  route(method, path, _query, body) {
    if (method !== "POST" || path !== "/v1/messages") return null;
    const b = (body && typeof body === "object" ? body : {}) as { model?: string; stream?: boolean };
    return { stream: b.stream === true, model: b.model ?? "unknown" };
  },
  reject(req) {
    if (!req.headers["x-api-key"]) return { status: 401, code: "authentication_error", message: "x-api-key header is required" };
    if (!req.headers["anthropic-version"]) return invalidRequest("anthropic-version header is required");
    return refusalOf(req.body);
  },
  errorBody(status, code, message) {
    return { type: "error", error: { type: code ?? ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"), message: message ?? `fake upstream error ${status}` } };
  },
  json(reply, req, model) {
    if (reply.anthropicContent) {
      return { id: "msg_fake123", type: "message", role: "assistant", model, content: reply.anthropicContent, stop_reason: stopOf(reply), stop_sequence: null, usage: usageOf(reply, req) };
    }
    const content: unknown[] = [];
    if (reply.reasoning) content.push({ type: "thinking", thinking: reply.reasoning, signature: fakeThinkingSignature(reply.reasoning) });
    const text = replyText(reply);
    if (text) content.push({ type: "text", text });
    (reply.toolCalls ?? []).forEach((c, i) => content.push({ type: "tool_use", id: toolId(i, c.id), name: c.name, input: parseArgs(toolArguments(c)) }));
    return { id: "msg_fake123", type: "message", role: "assistant", model, content, stop_reason: stopOf(reply), stop_sequence: null, usage: usageOf(reply, req) };
  },
  frames(reply, req, model) {
    const usage = usageOf(reply, req);
    const frames: Frame[] = [
      {
        text: sse(
          {
            type: "message_start",
            message: { id: "msg_fake123", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
          },
          "message_start",
        ),
        content: false,
      },
      { text: sse({ type: "ping" }, "ping"), content: false },
    ];
    let index = 0;
    const block = (start: unknown, deltas: unknown[], contentStart: boolean) => {
      frames.push({ text: sse({ type: "content_block_start", index, content_block: start }, "content_block_start"), content: contentStart });
      for (const delta of deltas) frames.push({ text: sse({ type: "content_block_delta", index, delta }, "content_block_delta"), content: true });
      frames.push({ text: sse({ type: "content_block_stop", index }, "content_block_stop"), content: false });
      index++;
    };
    if (reply.anthropicContent) {
      for (const b of reply.anthropicContent) block(...streamedBlock(b));
    } else if (reply.reasoning) {
      const pieces = (reply.reasoning.match(/\S+\s*|\s+/g) ?? []).map((thinking) => ({ type: "thinking_delta", thinking }));
      const signature = { type: "signature_delta", signature: fakeThinkingSignature(reply.reasoning) };
      block({ type: "thinking", thinking: "", signature: "" }, [...pieces, signature], false);
    }
    const pieces = reply.anthropicContent ? [] : textPieces(reply);
    if (pieces.length) block({ type: "text", text: "" }, pieces.map((text) => ({ type: "text_delta", text })), false);
    (reply.anthropicContent ? [] : (reply.toolCalls ?? [])).forEach((c, i) =>
      block(
        { type: "tool_use", id: toolId(i, c.id), name: c.name, input: {} },
        argumentPieces(c).map((partial_json) => ({ type: "input_json_delta", partial_json })),
        true,
      ),
    );
    frames.push({
      text: sse({ type: "message_delta", delta: { stop_reason: stopOf(reply), stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, "message_delta"),
      content: false,
    });
    frames.push({ text: sse({ type: "message_stop" }, "message_stop"), content: false });
    return frames;
  },
  errorFrame(code, message) {
    return sse({ type: "error", error: { type: code ?? "overloaded_error", message: message ?? "Overloaded" } }, "error");
  },
  otherRoute(req) {
    if (req.method !== "POST" || req.path !== "/v1/messages/count_tokens") return null;
    if (!req.headers["x-api-key"]) return { status: 401, body: { type: "error", error: { type: "authentication_error", message: "x-api-key header is required" } } };
    return countTokens(req.body);
  },
};

/** Starts a fake Anthropic Messages API; `url` ends in `/v1`. */
export function startFakeAnthropic(opts?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeProvider(anthropicWire, opts);
}
