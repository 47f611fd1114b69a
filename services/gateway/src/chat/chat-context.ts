import type { routing } from "@router/proto";
import type { Caller } from "../auth/caller";
import type { NativeBody } from "@router/inference-api";
import type { IngressBase } from "../ingress/ingress-base";
import { NO_RENAMED_TOOLS, type ClientToolNames } from "@router/inference-api";
import { randomId } from "@router/random-tokens";
import { promptTokenBound } from "../spend/worst-case";
import type { LeaseTicket } from "../spend/spend-leases";
import type { ChatRequest } from "@router/chat-request";
import type { RouterHeaders } from "../request-model/router-headers";

/**
 * A valid request as it passes through the stages: admission, a responder, finishing. `I` is what
 * the responder needs of its ingress (a chat responder renders through `Ingress`).
 */
export interface ChatContext<I extends IngressBase = IngressBase> {
  /** The generation id (`gen-…`), also the request id the ledger and the event carry. */
  id: string;
  caller: Caller;
  /** The format the request came in and is answered in. */
  ingress: I;
  /** What the ingress's answer repeats of the request (`ParsedRequest.echo`). */
  echo: Record<string, unknown> | null;
  /**
   * The client's body for same-family endpoints (`ParsedRequest.native`); null when the format has
   * none, or when a content filter rewrote the messages (only the internal request carries that).
   */
  native: NativeBody | null;
  createdAt: Date;
  /** `createdAt` in Unix seconds, as the OpenAI shapes carry it. */
  created: number;
  /** `performance.now()` when the handler started: overhead and time to first token count from here. */
  t0: number;
  headers: RouterHeaders;
  request: ChatRequest;
  promptTokens: number;
  /** Routing's answer; null until admission asked for it. */
  plan: routing.PlanResponse | null;
  /** The ledger hold reserving this request's worst case; empty when none was placed. */
  holdId: string;
  /**
   * Whether the spend admission answered, so `holdId` is known: false when it was never asked or
   * failed (an Admit that timed out may still have placed a hold, which the ledger then looks up).
   */
  holdKnown: boolean;
  /** Set instead of `holdId` when a spend lease admitted the request. */
  lease: LeaseTicket | null;
  /** Labels of the content-filter detectors that matched the messages (never the matched text). */
  contentFilterLabels: string[];
  /** Router's fee in basis points of the list cost, as admission found it (0: none is charged). */
  feeBps: number;
  /** The run this request is an admitted turn of: its settlement reports the turn. Null otherwise. */
  runId: string | null;
  /** Built-in tools the request names (`ParsedRequest.builtinTools`); dropped per endpoint (builtin-tools.ts). */
  builtinTools: readonly string[];
  /** Tools renamed for providers (`ParsedRequest.toolNames`), for rendering their calls back. */
  toolNames: ClientToolNames;
  /** The input items a stored answer keeps (`ParsedRequest.storedInput`); empty when the format keeps none. */
  storedInput: Record<string, unknown>[];
}

/** A generation id (`gen-` and 128 random bits): a request's id from its first byte, `x-request-id` included. */
export const newGenerationId = (): string => `gen-${randomId(16, "hex")}`;

export function newChatContext<I extends IngressBase>(
  caller: Caller,
  headers: RouterHeaders,
  request: ChatRequest,
  createdAt: Date,
  t0: number,
  ingress: I,
  echo: Record<string, unknown> | null = null,
  native: NativeBody | null = null,
  id: string = newGenerationId(),
): ChatContext<I> {
  return {
    id,
    caller,
    ingress,
    echo,
    native,
    createdAt,
    created: Math.floor(createdAt.getTime() / 1000),
    t0,
    headers,
    request,
    promptTokens: promptTokenBound(request),
    plan: null,
    holdId: "",
    holdKnown: false,
    lease: null,
    contentFilterLabels: [],
    feeBps: 0,
    runId: null,
    builtinTools: [],
    toolNames: NO_RENAMED_TOOLS,
    storedInput: [],
  };
}

/** The models of the routed cascade, in order (repeated once per endpoint). */
export const cascadeModels = (ctx: ChatContext): string[] => (ctx.plan?.cascade ?? []).map((c) => c.modelId);
