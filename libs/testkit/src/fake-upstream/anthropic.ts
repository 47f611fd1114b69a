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
    if (!req.headers["anthropic-version"]) return { status: 400, code: "invalid_request_error", message: "anthropic-version header is required" };
    return null;
  },
  errorBody(status, code, message) {
    return { type: "error", error: { type: code ?? ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"), message: message ?? `fake upstream error ${status}` } };
  },
  json(reply, _req, model) {
    const content: unknown[] = [];
    if (reply.reasoning) content.push({ type: "thinking", thinking: reply.reasoning, signature: "sig-fake" });
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
      const pieces = (reply.reasoning.match(/\S+\s*/g) ?? []).map((thinking) => ({ type: "thinking_delta", thinking }));
      block({ type: "thinking", thinking: "" }, [...pieces, { type: "signature_delta", signature: "sig-fake" }], false);
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
