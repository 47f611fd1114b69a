import type { ChatRequest, ReasoningDetail } from "@router/chat-request";
import type { CloudCredential } from "./cloud-credentials";

/**
 * The provider adapter contract. An adapter is data plus pure transforms between the router's
 * OpenAI-compatible shapes and one provider family's wire format; it does no I/O.
 */

/** Wire formats; "bedrock" is Amazon Bedrock's Converse API. */
export type ApiFamily = "openai" | "anthropic" | "google" | "bedrock";

/** Normalized finish reasons; the provider's own value travels beside as `native_finish_reason`. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "error";

/** Where and as whom one attempt is sent. */
export interface UpstreamTarget {
  providerSlug: string;
  /** The API root including its version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** The catalog's model id (`anthropic/claude-sonnet-4.5`). */
  modelId: string;
  /** The provider's own name for the model. */
  upstreamModel: string;
  /** The provider's API key; empty for a cloud, whose credential is `cloud`. */
  apiKey: string;
  /** A cloud's credential document (Azure OpenAI, Bedrock, Vertex AI); null for an API key. */
  cloud: CloudCredential | null;
  /** Where the endpoint serves from: the catalog's region, else the cloud credential's; null when neither says. */
  region: string | null;
  /** The endpoint's max output tokens; 0 when unknown. */
  maxOutputTokens: number;
  /** `X-Vendor-Beta` from the client, forwarded only by the adapter whose provider it concerns. */
  vendorBeta: string | null;
}

/** An HTTP request ready to send. `body` is the JSON text. */
export interface UpstreamHttpRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

export interface TokenUsage {
  /** Every prompt token, cached ones included. */
  prompt: number;
  /** Every output token, reasoning included. */
  completion: number;
  /** Prompt tokens read from the provider's cache (a subset of `prompt`). */
  cached: number;
  /**
   * Prompt tokens written to the provider's cache for five minutes / one hour (subsets of `prompt`,
   * apart from `cached`); providers price writes above other prompt tokens. Absent: none.
   */
  cacheWrite5m?: number;
  cacheWrite1h?: number;
  /** Reasoning tokens (a subset of `completion`). */
  reasoning: number;
}

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface CompletionMessage {
  role: "assistant";
  content: string | null;
  reasoning?: string;
  /** The reasoning blocks as the provider returned them (signatures, encrypted data), to be echoed back. */
  reasoning_details?: ReasoningDetail[];
  tool_calls?: ToolCall[];
}

export interface CompletionChoice {
  index: number;
  message: CompletionMessage;
  finish_reason: FinishReason | null;
  native_finish_reason: string | null;
}

/** A whole (non-stream) completion, normalized. */
export interface Completion {
  choices: CompletionChoice[];
  /** Null when the provider reported none. */
  usage: TokenUsage | null;
  /**
   * The provider's own answer body, for an ingress of the provider's format to pass on (same-family
   * fidelity: block types, citations, server-tool results Router does not model); absent when the
   * adapter keeps none.
   */
  native?: Record<string, unknown>;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

export interface ChunkDelta {
  role?: "assistant";
  content?: string;
  reasoning?: string;
  /** Pieces of `reasoning_details`; entries sharing an `index` belong to one block. */
  reasoning_details?: ReasoningDetail[];
  tool_calls?: ToolCallDelta[];
}

export interface ChunkChoice {
  index: number;
  delta: ChunkDelta;
  finish_reason: FinishReason | null;
  native_finish_reason: string | null;
}

/** What a stream decoder makes of the provider's server-sent events. */
export type StreamEvent =
  /** `content` is true when the chunk carries text, reasoning or a tool call (the commit point). */
  | { type: "chunk"; choices: ChunkChoice[]; content: boolean }
  /** Usage so far; the last one wins. */
  | { type: "usage"; usage: TokenUsage }
  /** The provider reported an error inside the stream. */
  | { type: "error"; code: string | null; message: string | null }
  /** The provider said the stream is complete. */
  | { type: "done" }
  /** An event as the provider sent it, before what it means (only from a decoder asked to keep them). */
  | { type: "native"; message: SseMessage };

export interface SseMessage {
  event?: string | undefined;
  data: string;
}

/** Stateful per stream (tool-call indexes, block kinds); create one per attempt. */
export interface StreamDecoder {
  /** Appends what `message` means to `out`. */
  decode(message: SseMessage, out: StreamEvent[]): void;
}

/** A response's headers as the HTTP client gives them (lower-case names). */
export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The provider's own error code and text, read from an error body. */
export interface ProviderError {
  code: string | null;
  /** The provider's own words; returned only to the caller of that request, never recorded. */
  message: string | null;
}

/**
 * Splits a provider's stream body into messages. Server-sent events unless the adapter says
 * otherwise (Bedrock streams AWS event-stream binary frames).
 */
export interface StreamFramer {
  feed(bytes: Uint8Array): void;
  /** The body ended: hands on a last message that was complete but not terminated. */
  end(): void;
}

export type StreamFramerFactory = (onMessage: (message: SseMessage) => void) => StreamFramer;

/**
 * Thrown by `authorize` when the credential could not prove who is calling (a token endpoint
 * refused, a role could not be assumed). `reason` is a short code, never the provider's text.
 */
export class UpstreamAuthError extends Error {
  constructor(readonly reason: string, options?: { cause?: unknown }) {
    super(`upstream authorization failed: ${reason}`, options);
    this.name = "UpstreamAuthError";
  }
}

export interface ProviderAdapter {
  family: ApiFamily;
  /**
   * Adds what proves who is calling once the request is final: a SigV4 signature over the body, or
   * a bearer token minted (and cached) from the credential. Absent: `buildRequest` already did.
   * Rejects with `UpstreamAuthError` when the credential cannot be used.
   */
  authorize?(req: UpstreamHttpRequest, target: UpstreamTarget, signal: AbortSignal): Promise<UpstreamHttpRequest>;
  /** How the stream body is framed; absent: server-sent events. */
  createFramer?: StreamFramerFactory;
  buildRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest;
  /**
   * The request from the client's own body when it is written in this adapter's wire format
   * (same-family fidelity); `req` is the internal request, with what Router acts on (preset
   * settings). Absent: every request is translated by `buildRequest`.
   */
  buildNativeRequest?(native: Record<string, unknown>, req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest;
  parseCompletion(body: unknown): Completion;
  /**
   * `keepNative`: the decoder also hands on each event as the provider sent it (`native`), for an
   * ingress of the provider's format; adapters that cannot ignore it.
   */
  createStreamDecoder(keepNative?: boolean): StreamDecoder;
  /** `headers`: the error response's (Bedrock names the error's type in one). */
  parseError(body: string, headers?: ResponseHeaders): ProviderError;
  /** The provider's embeddings API; absent when it has none (Anthropic). */
  embeddings?: EmbeddingsAdapter;
}

/** An embeddings request as it goes upstream: the texts (after any redacting content filter) and the options. */
export interface EmbeddingsRequest {
  input: string[];
  /** Shortened vectors, where the model allows it. */
  dimensions?: number;
  /** What the client wants back; asked of providers that can answer it, encoded by the ingress otherwise. */
  encodingFormat: "float" | "base64";
  user?: string;
}

/** One vector: floats, or OpenAI's base64 of little-endian float32s, as the provider sent it. */
export type EmbeddingVector = number[] | string;

/** A provider's embeddings answer, normalized: one vector per input, in input order. */
export interface Embeddings {
  vectors: EmbeddingVector[];
  /** Null when the provider reported no usage (the Gemini API does not). */
  promptTokens: number | null;
}

export interface EmbeddingsAdapter {
  buildRequest(req: EmbeddingsRequest, target: UpstreamTarget): UpstreamHttpRequest;
  /** Throws `ProviderBodyError` for an error in a 2xx body, and an Error for any other shape. */
  parse(body: unknown, inputs: number): Embeddings;
}

/**
 * A request the adapter cannot express for its provider (e.g. tool-call arguments that are not an
 * object for a provider that needs one). Recorded with a `router.*` code; the caller gets a 400.
 */
export class UnsupportedRequest extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "UnsupportedRequest";
  }
}

/** A 2xx response whose body is the provider's error object (some servers answer errors with 200). */
export class ProviderBodyError extends Error {
  constructor(readonly error: ProviderError) {
    super(`provider error in a 2xx body: ${error.code ?? "unknown"}`);
    this.name = "ProviderBodyError";
  }
}

/** Reads a JSON value as a plain object, or returns null; for the parsers of provider bodies. */
export function asRecord(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** The object a JSON text holds; null when the text is not JSON or not an object. */
export function parseRecord(text: string): Record<string, unknown> | null {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return null;
  }
}

export const asString = (v: unknown): string | null => (typeof v === "string" ? v : null);
export const asNumber = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
