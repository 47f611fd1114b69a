import type { IncomingMessage } from "node:http";
import type { ErrorBody } from "@router/http-kit";
import type { ChatContext } from "../../chat/chat-context";
import type { SseResponse } from "../sse-response";
import { promptParts } from "../../spend/usage-cost";
import type { Candidate } from "../../dispatch/types";
import { asRecord, parseRecord, type ChunkChoice, type FinishReason, type SseMessage, type TokenUsage } from "@router/providers";
import type { Ingress, IngressStream, ServedAnswer, StreamEnd, StreamFailure } from "../ingress";
import { blocksOf, StreamBlocks, type OpenedBlock, type OutputBlock } from "@router/inference-api";
import { parseMessages } from "@router/inference-api";

export const MESSAGES_PATH = "/v1/messages";
/** Anthropic takes Messages bodies up to 32 MB (images and PDFs inline); so does this route, and count_tokens. */
export const MESSAGES_BODY_LIMIT = "32mb";

/** Anthropic's stop reasons, kept as they are when Anthropic served; others are mapped. */
const ANTHROPIC_STOPS = new Set(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"]);

export function stopReasonOf(finish: FinishReason | null, native: string | null): string | null {
  if (native && ANTHROPIC_STOPS.has(native)) return native;
  switch (finish) {
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
    case null:
      return null;
    default:
      return "end_turn";
  }
}

/** Anthropic counts input tokens without cache reads and writes, which it reports apart (writes also per TTL). */
export function messagesUsage(u: TokenUsage): Record<string, unknown> {
  const parts = promptParts(u);
  return {
    input_tokens: parts.uncached,
    output_tokens: u.completion,
    cache_read_input_tokens: parts.cacheRead,
    cache_creation_input_tokens: parts.cacheWrite5m + parts.cacheWrite1h,
    cache_creation: { ephemeral_5m_input_tokens: parts.cacheWrite5m, ephemeral_1h_input_tokens: parts.cacheWrite1h },
  };
}

function contentBlock(b: OutputBlock): Record<string, unknown> {
  switch (b.kind) {
    case "reasoning":
      return { type: "thinking", thinking: b.text, signature: b.signature ?? "" };
    case "redacted":
      return { type: "redacted_thinking", data: b.data };
    case "text":
      return { type: "text", text: b.text };
    case "tool_call":
      return { type: "tool_use", id: b.id, name: b.name, input: toolInput(b.arguments) };
  }
}

/** Tool input is an object on this format; arguments that are not one are passed under `arguments`. */
function toolInput(args: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(args || "{}");
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // Not JSON: kept as text below.
  }
  return { arguments: args };
}

/** Anthropic's error types by status. */
function errorType(status: number): string {
  if (status === 400 || status === 422) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 402) return "billing_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 503 || status === 529) return "overloaded_error";
  if (status === 504) return "timeout_error";
  return "api_error";
}

/** `{type: "error", error: {type, message}}`, with the router's `code` and `details` beside. */
function anthropicError(e: ErrorBody["error"]): Record<string, unknown> {
  return { type: "error", error: { type: errorType(e.status), message: e.message, code: e.code, ...(e.details ? { details: e.details } : {}) } };
}

/**
 * `POST /v1/messages`: Anthropic Messages in and out, served by any provider. `x-api-key` is taken
 * as well as a bearer key, and `anthropic-beta` goes to Anthropic as the router's `X-Vendor-Beta`.
 */
export const anthropicMessagesIngress: Ingress = {
  kind: "chat",
  name: "anthropic_messages",
  path: MESSAGES_PATH,
  prepare(req: IncomingMessage): void {
    const h = req.headers;
    const apiKey = h["x-api-key"];
    if (!h.authorization && typeof apiKey === "string" && apiKey.trim() !== "") h.authorization = `Bearer ${apiKey.trim()}`;
    if (h["x-vendor-beta"] === undefined && typeof h["anthropic-beta"] === "string") h["x-vendor-beta"] = h["anthropic-beta"];
  },
  parse(body) {
    const { request, native, providerTools } = parseMessages(body);
    return { request, echo: null, native, ...(providerTools.length ? { builtinTools: providerTools } : {}) };
  },
  render(ctx: ChatContext, a: ServedAnswer): Record<string, unknown> {
    const native = a.candidate.apiFamily === "anthropic" ? a.completion.native : undefined;
    if (native) return anthropicAnswer(ctx, a, native);
    const choice = a.completion.choices[0];
    const body: Record<string, unknown> = {
      id: ctx.id,
      type: "message",
      role: "assistant",
      model: a.candidate.modelId,
      provider: a.candidate.providerSlug,
      content: choice ? blocksOf(choice.message).map(contentBlock) : [],
      stop_reason: stopReasonOf(choice?.finish_reason ?? null, choice?.native_finish_reason ?? null) ?? "end_turn",
      stop_sequence: null,
      usage: messagesUsage(a.usage),
    };
    if (a.meta) body.router_metadata = a.meta;
    return body;
  },
  stream: (ctx, sse) => new MessagesEvents(ctx, sse),
  errorBody: anthropicError,
  overloadedStatus: 529,
  bodyLimit: MESSAGES_BODY_LIMIT,
};

/**
 * Anthropic's own answer as it sent it (same-family fidelity: server-tool blocks such as
 * `web_search_tool_result`, citations, block types newer than Router), with Router's id and model
 * name, the provider that served, and usage as Router counted it (Anthropic's own extra usage fields,
 * such as `server_tool_use`, kept).
 */
function anthropicAnswer(ctx: ChatContext, a: ServedAnswer, native: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...native,
    id: ctx.id,
    model: a.candidate.modelId,
    provider: a.candidate.providerSlug,
    usage: { ...asRecord(native.usage), ...messagesUsage(a.usage) },
  };
  if (a.meta) body.router_metadata = a.meta;
  return body;
}

/**
 * The Messages event stream: message_start, then per block content_block_start, its deltas and
 * content_block_stop, then message_delta (stop reason, usage) and message_stop; an `error` event
 * when the stream fails.
 */
class MessagesEvents implements IngressStream {
  private readonly blocks: StreamBlocks;
  private started = false;
  readonly nativeFamily = "anthropic" as const;
  /** Anthropic serves: its own events go on (`native`), and chunks render nothing. */
  private passthrough = false;
  private candidate: Candidate | null = null;
  /** Anthropic's message_delta, held until the stream ends (usage and router_metadata go on it). */
  private heldDelta: Record<string, unknown> | null = null;

  constructor(
    private readonly ctx: ChatContext,
    private readonly sse: SseResponse,
  ) {
    this.blocks = new StreamBlocks({
      open: (index, block) => this.send("content_block_start", { type: "content_block_start", index, content_block: openedBlock(block) }),
      delta: (index, kind, text) => this.send("content_block_delta", { type: "content_block_delta", index, delta: deltaOf(kind, text) }),
      signature: (index, signature) =>
        this.send("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature } }),
      close: (index) => this.send("content_block_stop", { type: "content_block_stop", index }),
    });
  }

  commit(c: Candidate): void {
    this.started = true;
    this.candidate = c;
    this.passthrough = c.apiFamily === "anthropic";
    // Anthropic's own message_start follows as a native event.
    if (this.passthrough) return;
    this.send("message_start", {
      type: "message_start",
      message: {
        id: this.ctx.id,
        type: "message",
        role: "assistant",
        model: c.modelId,
        provider: c.providerSlug,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
  }

  chunk(choices: ChunkChoice[]): void {
    if (!this.passthrough) this.blocks.feed(choices);
  }

  /**
   * Anthropic's events as it sent them, for what Router says itself: message_start gets Router's id,
   * model name and provider; message_delta waits for the end (Router's usage and metadata);
   * message_stop and error events are Router's to send (`end`, `fail`).
   */
  native(m: SseMessage): void {
    if (!this.passthrough) return;
    switch (m.event) {
      case "message_start": {
        const ev = parseRecord(m.data);
        const message = asRecord(ev?.message);
        if (!ev || !message || !this.candidate) return;
        this.send("message_start", { ...ev, message: { ...message, id: this.ctx.id, model: this.candidate.modelId, provider: this.candidate.providerSlug } });
        return;
      }
      case "message_delta":
        this.heldDelta = parseRecord(m.data);
        return;
      case "message_stop":
      case "error":
        return;
      default:
        // Blocks, deltas and pings: the bytes Anthropic sent.
        if (m.event) this.sse.event(m.event, m.data);
    }
  }

  end(e: StreamEnd): void {
    if (this.passthrough) {
      const held = this.heldDelta ?? { type: "message_delta", delta: { stop_reason: stopReasonOf(e.finishReason, e.nativeFinishReason) ?? "end_turn", stop_sequence: null } };
      const delta: Record<string, unknown> = { ...held, usage: { ...asRecord(held.usage), ...messagesUsage(e.usage) } };
      if (e.meta) delta.router_metadata = e.meta;
      this.send("message_delta", delta);
      this.send("message_stop", { type: "message_stop" });
      return;
    }
    this.blocks.finish();
    const delta: Record<string, unknown> = {
      type: "message_delta",
      delta: { stop_reason: stopReasonOf(e.finishReason, e.nativeFinishReason) ?? "end_turn", stop_sequence: null },
      usage: messagesUsage(e.usage),
    };
    if (e.meta) delta.router_metadata = e.meta;
    this.send("message_delta", delta);
    this.send("message_stop", { type: "message_stop" });
  }

  fail(f: StreamFailure): void {
    // Anthropic ends a failed stream with its error event and no block stops; so does a passed-on stream.
    if (this.started && !this.passthrough) this.blocks.finish();
    const body = anthropicError({ status: f.error.status, code: f.error.code, message: f.error.message, details: f.error.details });
    if (f.meta) body.router_metadata = f.meta;
    this.send("error", body);
  }

  close(): void {
    this.sse.end();
  }

  private send(event: string, data: Record<string, unknown>): void {
    this.sse.event(event, JSON.stringify(data));
  }
}

function openedBlock(b: OpenedBlock): Record<string, unknown> {
  switch (b.kind) {
    case "reasoning":
      return { type: "thinking", thinking: "", signature: "" };
    case "redacted":
      return { type: "redacted_thinking", data: b.data };
    case "text":
      return { type: "text", text: "" };
    case "tool_call":
      return { type: "tool_use", id: b.id, name: b.name, input: {} };
  }
}

function deltaOf(kind: "reasoning" | "text" | "tool_call", text: string): Record<string, unknown> {
  if (kind === "reasoning") return { type: "thinking_delta", thinking: text };
  if (kind === "text") return { type: "text_delta", text };
  return { type: "input_json_delta", partial_json: text };
}
