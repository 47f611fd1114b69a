/** What a fake upstream provider does with one request. Every field is optional. */
export interface FakeReply {
  /** The completion text. Default: "Hello from the fake upstream." */
  text?: string;
  /** Stream pieces of the text; default: the text split after each word. */
  chunks?: string[];
  /** Reasoning ("thinking") text, sent before the answer. */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /**
   * The Anthropic fake: the answer's content blocks as Anthropic writes them (server-tool blocks
   * such as `server_tool_use` and `web_search_tool_result`, text with `citations`), instead of the
   * text, reasoning and tool calls; streamed block by block as Anthropic streams them.
   */
  anthropicContent?: Record<string, unknown>[];
  /** The provider's own finish reason (e.g. `length`, `max_tokens`, `MAX_TOKENS`). */
  finishReason?: string;
  /** Token counts reported; null makes an OpenAI-compatible fake report none (as some servers do). */
  usage?: FakeUsage | null;
  /** Embeddings requests: the vector length when the request names no `dimensions` (default 8). */
  embeddingDimensions?: number;
  /** Model name the provider reports; default the requested one. */
  model?: string;
  /** Wait before sending status and headers. */
  headersDelayMs?: number;
  /** Wait between stream events. */
  chunkDelayMs?: number;
  failure?: FakeFailure;
}

export interface FakeToolCall {
  id?: string;
  name: string;
  /** JSON text or an object that is serialised. */
  arguments: string | Record<string, unknown>;
}

export interface FakeUsage {
  /** Every prompt token, cache reads and writes included. */
  prompt: number;
  completion: number;
  /** Prompt tokens read from the cache. */
  cached?: number;
  reasoning?: number;
  /** Prompt tokens written to the cache for 5 minutes / 1 hour (reported by the Anthropic fake). */
  cacheWrite5m?: number;
  cacheWrite1h?: number;
}

export type FakeFailure =
  /** An HTTP error with the provider's own error body. */
  | { kind: "status"; status: number; code?: string; message?: string; retryAfter?: string }
  /** The connection is destroyed before any response. */
  | { kind: "reset" }
  /** Nothing is ever sent; the socket stays open until the client gives up or the server closes. */
  | { kind: "hang" }
  /** Non-stream requests: status 200, headers and the first half of the answer, then silence with the connection open. */
  | { kind: "stall-body" }
  /** Stream requests: status 200 and the stream preamble, then a clean end before any content. */
  | { kind: "empty-stream" }
  /** Stream requests: `chunks` content events, then the connection is destroyed. */
  | { kind: "break-after"; chunks: number }
  /** Stream requests: `chunks` content events, then the provider's own in-stream error event. */
  | { kind: "stream-error"; chunks: number; code?: string; message?: string }
  /** Stream requests: `chunks` content events, then silence with the connection open. */
  | { kind: "stall-after"; chunks: number }
  /**
   * Stream requests: every event but the last (the end marker, `[DONE]` or `message_stop`), then
   * silence with the connection open.
   */
  | { kind: "stall-before-end" };

/** One request as the fake provider received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** The body's text as received (what a signature covers). */
  rawBody?: string;
  receivedAt: number;
  /** Set when the client closed the connection before the reply was complete (e.g. it aborted). */
  clientClosed: boolean;
}

export interface FakeUpstream {
  /** Base URL as a catalog would carry it (OpenAI `…/v1`, Anthropic `…/v1`, Gemini `…/v1beta`). */
  url: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  /** Queues replies; each request takes the next one, then the default. */
  script(...replies: FakeReply[]): void;
  /** The reply used when the queue is empty. */
  setDefault(reply: FakeReply): void;
  /** Forgets recorded requests and queued replies. */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  port?: number;
  defaultReply?: FakeReply;
}

export const DEFAULT_TEXT = "Hello from the fake upstream.";

/** Splits text into stream pieces after each run of whitespace, keeping every character. */
export function textPieces(reply: FakeReply): string[] {
  if (reply.chunks) return reply.chunks;
  const text = reply.text ?? (reply.toolCalls?.length ? "" : DEFAULT_TEXT);
  return text.match(/\S+\s*|\s+/g) ?? [];
}

export function replyText(reply: FakeReply): string {
  if (reply.chunks) return reply.chunks.join("");
  return reply.text ?? (reply.toolCalls?.length ? "" : DEFAULT_TEXT);
}

export function replyUsage(reply: FakeReply): Required<FakeUsage> {
  const u = reply.usage;
  return {
    prompt: u?.prompt ?? 12,
    completion: u?.completion ?? Math.max(1, textPieces(reply).length),
    cached: u?.cached ?? 0,
    reasoning: u?.reasoning ?? 0,
    cacheWrite5m: u?.cacheWrite5m ?? 0,
    cacheWrite1h: u?.cacheWrite1h ?? 0,
  };
}

export function toolArguments(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

/** Splits a tool call's argument JSON into two pieces, as providers stream partial JSON. */
export function argumentPieces(call: FakeToolCall): string[] {
  const args = toolArguments(call);
  const half = Math.ceil(args.length / 2);
  return args.length > 1 ? [args.slice(0, half), args.slice(half)] : [args];
}
