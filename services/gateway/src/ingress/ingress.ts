import type { DomainError } from "@router/errors";
import type { Caller } from "../auth/caller";
import type { ChatContext } from "../chat/chat-context";
import type { SseResponse } from "./sse-response";
import type { IngressBase } from "./ingress-base";

export type { IngressBase, IngressName } from "./ingress-base";
import type { Candidate } from "../dispatch/types";
import type { ParsedEmbeddings, ParsedRequest } from "@router/inference-api";
import type { ApiFamily, ChunkChoice, Completion, Embeddings, EmbeddingsRequest, FinishReason, SseMessage, TokenUsage } from "@router/providers";

export type { NativeBody, ParsedEmbeddings, ParsedRequest } from "@router/inference-api";

/**
 * The ingress adapter contract: the mirror of a provider adapter. A provider adapter turns the
 * internal chat request into a provider's wire format and its answer back; an ingress adapter turns
 * a client's wire format (OpenAI chat completions, OpenAI Responses, Anthropic Messages) into the
 * internal chat request and renders the internal answer, stream and errors back in that format.
 * Everything between (authentication, admission, routing, failover, settlement, events) is the one
 * chat pipeline (`chat/`), the same for every ingress.
 */


/** What a served, whole answer is rendered from. */
export interface ServedAnswer {
  candidate: Candidate;
  completion: Completion;
  usage: TokenUsage;
  /** `router_metadata` when the caller asked for it. */
  meta: Record<string, unknown> | null;
}

/** How a committed stream ended well. */
export interface StreamEnd {
  candidate: Candidate;
  usage: TokenUsage;
  finishReason: FinishReason | null;
  nativeFinishReason: string | null;
  meta: Record<string, unknown> | null;
}

/** How a stream ended badly: before any provider answered (`candidate` null) or after it committed. */
export interface StreamFailure {
  error: DomainError;
  candidate: Candidate | null;
  usage: TokenUsage | null;
  meta: Record<string, unknown> | null;
}

/** One stream's renderer: stateful (open blocks, sequence numbers); made per request. */
export interface IngressStream {
  /** The stream committed to the endpoint that serves it (before its first chunk). */
  commit(candidate: Candidate): void;
  chunk(choices: ChunkChoice[]): void;
  /**
   * The provider family whose own events this stream renders as they came, when that family serves
   * (same-family fidelity: block types Router does not model reach the client); `chunk` is still
   * called with what they mean. Absent: the stream renders from chunks alone.
   */
  readonly nativeFamily?: ApiFamily;
  native?(message: SseMessage): void;
  /** May wait before the last event, e.g. until a stored response is written (Responses `store`). */
  end(end: StreamEnd): void | Promise<void>;
  fail(failure: StreamFailure): void;
  /** The format's last word (`data: [DONE]` or none); ends the response. */
  close(): void;
}

/** A format that asks for a chat completion (OpenAI chat completions, Responses, Anthropic Messages). */
export interface Ingress extends IngressBase {
  kind: "chat";
  /**
   * Completes the body with what the caller's organisation stored for it, after authentication and
   * before parsing (Responses: `previous_response_id`, `item_reference` items, whether `store` may keep).
   */
  expand?: (body: unknown, caller: Caller) => Promise<unknown>;
  /** Validates the body (a 400 naming the field) and maps it to the internal chat request. */
  parse: (body: unknown) => ParsedRequest;
  /** The body of a whole answer. */
  render: (ctx: ChatContext, answer: ServedAnswer) => Record<string, unknown>;
  /** Keeps a whole answer's body before it is sent (Responses `store`); may change what the body says of it. */
  keep?: (ctx: ChatContext, body: Record<string, unknown>) => Promise<void>;
  stream: (ctx: ChatContext, sse: SseResponse) => IngressStream;
}


/** What a served embeddings answer is rendered from. */
export interface EmbeddingsAnswer {
  candidate: Candidate;
  embeddings: Embeddings;
  usage: TokenUsage;
  encodingFormat: EmbeddingsRequest["encodingFormat"];
  meta: Record<string, unknown> | null;
}

/** A format that asks for embeddings: a whole answer only, never a stream. */
export interface EmbeddingsIngress extends IngressBase {
  kind: "embeddings";
  parse: (body: unknown) => ParsedEmbeddings;
  render: (ctx: ChatContext, answer: EmbeddingsAnswer) => Record<string, unknown>;
}

export type AnyIngress = Ingress | EmbeddingsIngress;
