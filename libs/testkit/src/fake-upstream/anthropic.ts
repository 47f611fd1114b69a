import { createHash } from "node:crypto";
import { argumentPieces, replyText, replyUsage, textPieces, toolArguments, type FakeReply, type FakeUpstream, type FakeUpstreamOptions } from "./script";
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

function usageOf(reply: FakeReply) {
  const u = replyUsage(reply);
  // Anthropic reports uncached input apart from cache reads.
  return { input_tokens: u.prompt - u.cached, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cached, output_tokens: u.completion };
}

/**
 * The signature the fake gives a thinking block: derived from its text, so an echoed block whose
 * text or signature was altered is refused, as the real API refuses a block it did not sign.
 */
export function fakeThinkingSignature(thinking: string): string {
  return `fakesig_${createHash("sha256").update(thinking).digest("base64url").slice(0, 32)}`;
}

type Refusal = { status: number; code: string; message: string };
const invalidRequest = (message: string): Refusal => ({ status: 400, code: "invalid_request_error", message });
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const blocksOf = (message: unknown): unknown[] => (isObject(message) && Array.isArray(message.content) ? message.content : []);
const blockType = (block: unknown): unknown => (isObject(block) ? block.type : undefined);

/** What the real Messages API refuses that matters to the router: a missing max_tokens, thinking rules, forged thinking. */
function refusalOf(body: unknown): Refusal | null {
  const b = isObject(body) ? body : {};
  if (b.max_tokens === undefined) return invalidRequest("max_tokens: Field required");
  if (typeof b.max_tokens !== "number" || !Number.isInteger(b.max_tokens) || b.max_tokens < 1) {
    return invalidRequest("max_tokens: Input should be a valid integer greater than or equal to 1");
  }
  const messages = Array.isArray(b.messages) ? b.messages : [];
  for (const [i, message] of messages.entries()) {
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
  json(reply, _req, model) {
    const content: unknown[] = [];
    if (reply.reasoning) content.push({ type: "thinking", thinking: reply.reasoning, signature: fakeThinkingSignature(reply.reasoning) });
    const text = replyText(reply);
    if (text) content.push({ type: "text", text });
    (reply.toolCalls ?? []).forEach((c, i) => content.push({ type: "tool_use", id: toolId(i, c.id), name: c.name, input: parseArgs(toolArguments(c)) }));
    return { id: "msg_fake123", type: "message", role: "assistant", model, content, stop_reason: stopOf(reply), stop_sequence: null, usage: usageOf(reply) };
  },
  frames(reply, _req, model) {
    const usage = usageOf(reply);
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
    if (reply.reasoning) {
      const pieces = (reply.reasoning.match(/\S+\s*|\s+/g) ?? []).map((thinking) => ({ type: "thinking_delta", thinking }));
      const signature = { type: "signature_delta", signature: fakeThinkingSignature(reply.reasoning) };
      block({ type: "thinking", thinking: "", signature: "" }, [...pieces, signature], false);
    }
    const pieces = textPieces(reply);
    if (pieces.length) block({ type: "text", text: "" }, pieces.map((text) => ({ type: "text_delta", text })), false);
    (reply.toolCalls ?? []).forEach((c, i) =>
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
};

/** Starts a fake Anthropic Messages API; `url` ends in `/v1`. */
export function startFakeAnthropic(opts?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeProvider(anthropicWire, opts);
}
