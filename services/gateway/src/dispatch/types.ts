import type { routing } from "@router/proto";
import type { ChatRequest } from "@router/chat-request";
import type { NativeBody } from "@router/inference-api";
import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import type { ApiFamily, ChunkChoice, Completion, Embeddings, FinishReason, SseMessage, TokenUsage } from "@router/providers";
import type { AttemptFailure } from "./attempt-failure";

// What the chat path hands the dispatcher and what it gets back; imports no dispatcher code.

export type Candidate = routing.Candidate;

/** One dispatch to a provider, as recorded on the request. */
export interface Attempt {
  id: string;
  /** 1-indexed position of the endpoint in the cascade. */
  attempt: number;
  candidate: Candidate;
  credentialId: string;
  /** A stream that shipped content and then failed is `ok` with an error message. */
  status: "ok" | "error";
  httpStatus: number | null;
  errorCode: string | null;
  /** Names provider, status and code; never the provider's own text. */
  errorMessage: string | null;
  startedAtMs: number;
  durationMs: number | null;
  ttftMs: number | null;
  /** Dispatched although the endpoint's circuit was open, because nothing else was left to try. */
  circuitOpen: boolean;
}

/** An endpoint the cascade passed over without dispatching. */
export interface Skip {
  candidate: Candidate;
  /** `fallback_policy`: a failed credential's policy ruled the endpoint out. */
  /** `no_deployment`: the organisation's Azure resources in the endpoint's region deploy no model of it. */
  reason: "no_credential" | "no_deployment" | "circuit_open" | "no_adapter" | "fallback_policy";
}

export interface CascadeInput {
  candidates: Candidate[];
  /**
   * The organisation's enabled credentials, in tier-then-priority order. Each endpoint is tried
   * with its provider's credentials in this order.
   */
  credentials: DispatchCredential[];
  allows(credential: DispatchCredential, modelId: string): boolean;
  request: ChatRequest;
  /** The client's own body, sent to endpoints of its wire family instead of a translation. */
  native: NativeBody | null;
  vendorBeta: string | null;
  /** Operator overrides of provider base URLs (self-hosted servers, tests); win over the catalog. */
  providerBaseUrls: Record<string, string>;
  signal: AbortSignal;
}

export interface Served {
  candidate: Candidate;
  credential: DispatchCredential;
}

export interface CascadeResult {
  attempts: Attempt[];
  skipped: Skip[];
  served: Served | null;
  /** The last failure: why nothing was served, or why a committed stream ended early. */
  failure: AttemptFailure | null;
  /** Milliseconds spent inside provider calls, every attempt included. */
  upstreamMs: number;
}

export interface CompletionResult extends CascadeResult {
  completion: Completion | null;
}

export interface EmbeddingsResult extends CascadeResult {
  embeddings: Embeddings | null;
}

export interface StreamResult extends CascadeResult {
  usage: TokenUsage | null;
  finishReason: FinishReason | null;
  nativeFinishReason: string | null;
  /** `performance.now()` when the first content chunk arrived. */
  firstContentAt: number | null;
}

/** Where a stream goes once it commits. Nothing is written before the first content chunk. */
export interface StreamSink {
  /** The first content chunk arrived from `served`: status and headers are final from here on. */
  commit(served: Served): void;
  chunk(choices: ChunkChoice[]): void;
  /** The provider family whose events `native` takes as they came (an ingress of its format); chunks still follow. */
  nativeFamily?: ApiFamily;
  native?(message: SseMessage): void;
}
