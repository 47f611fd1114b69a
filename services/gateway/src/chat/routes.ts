import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { EventBus } from "@router/bus";
import { DomainError } from "@router/errors";
import { errorBody, jsonBodyParser, writeHttpError, writeJson } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events, type routing } from "@router/proto";
import type { ResolveCaller } from "../auth/authenticate";
import type { Caller } from "../auth/caller";
import {
  UpstreamDispatcher,
  type CascadeInput,
  type CompletionResult,
  type Served,
  type StreamResult,
  type StreamSink,
} from "../dispatch/cascade";
import type { AttemptFailure } from "../dispatch/attempt-failure";
import { generationRecordOf } from "../generation/generation-record";
import type { RecentGenerations } from "../generation/recent-generations";
import type { GatewayMetrics } from "../metrics";
import type { CredentialSource, DispatchCredential } from "../provider-keys/dispatch-credential";
import type { ChunkChoice } from "../providers/types";
import { keyCeilings } from "./key-ceilings";
import type { LedgerPort, RoutingPort } from "./ports";
import { chunkPrefix, completionChars, errorChunk, usageBody } from "./completion-shapes";
import { dispatchError } from "./dispatch-error";
import { completedEvent, type RequestOutcome } from "./request-outcome";
import { parseChatRequest, type ChatRequest } from "./request-schema";
import { readRouterHeaders, type RouterHeaders } from "./router-headers";
import { randomId } from "../random-tokens";
import type { HoldClosings } from "./hold-closings";
import { SpendLeases, type LeaseTicket } from "./spend-leases";
import { routerMetadata } from "./router-metadata";
import { DEFAULT_KEEPALIVE_MS, SseResponse } from "./sse-response";
import { estimatedUsage, streamUsage, totalCost, usageLines } from "./usage-cost";
import { promptTokenBound, worstCaseCost } from "./worst-case";

export const REQUEST_COMPLETED_TOPIC = "router.request.completed.v1";
const CANCELLED = "router.client_cancelled";
const NOTHING_TO_RESERVE = { admitted: true, holdId: "", limitWarning: "" } as const;

export interface ChatDeps {
  /** Inference-key (or session) authentication. */
  resolveCaller: ResolveCaller;
  routing: RoutingPort;
  ledger: LedgerPort;
  /** Where settlements and releases wait for their batched call to the ledger. */
  closings: HoldClosings;
  /** Admits requests under hard ceilings from spend leases; every admission asks Admit when omitted. */
  leases?: SpendLeases;
  credentials: CredentialSource;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  /** Shared with `generationRoutes` so a generation is readable the moment it was answered. */
  recent: RecentGenerations;
  /** The provider HTTP client and circuit breakers; one per process. Built here when omitted. */
  upstream?: UpstreamDispatcher;
  /** `ROUTER_PROVIDER_<SLUG>_BASE_URL` overrides by provider slug; they win over the catalog. */
  providerBaseUrls?: Record<string, string>;
  /** Quiet time after which a stream gets a keepalive comment. Default 5 s. */
  keepaliveMs?: number;
  /** Where each request's outcome, overhead and attempts are counted; none when omitted. */
  metrics?: GatewayMetrics;
}

/** What the request carries through its stages once it is valid. */
interface Context {
  id: string;
  caller: Caller;
  createdAt: Date;
  created: number;
  t0: number;
  headers: RouterHeaders;
  request: ChatRequest;
  promptTokens: number;
  plan: routing.PlanResponse | null;
  holdId: string;
  /** Set instead of `holdId` when a spend lease admitted the request. */
  lease: LeaseTicket | null;
}

/** Thrown for refusals the pipeline makes on purpose (budget, routing): recorded as `refused`. */
class Refused extends DomainError {}

// Header values must be visible ASCII; a ledger sentence is, but a stray character must not 500.
const headerSafe = (s: string): string => s.replace(/[^\x20-\x7e]/g, "?");

const generationId = (): string => `gen-${randomId(16, "hex")}`;

const cascadeModels = (ctx: Context): string[] => (ctx.plan?.cascade ?? []).map((c) => c.modelId);

export const CHAT_COMPLETIONS_PATH = "/v1/chat/completions";

type ParsedRequest = IncomingMessage & { body?: unknown };

/**
 * `POST /v1/chat/completions` on Node's own request and response, for `routeAhead`: the hot path
 * skips express's router and its request and response wrappers (docs/decisions.md). The body is
 * parsed by the same parser as every express route, before authentication, as there.
 */
export function chatCompletionsListener(deps: ChatDeps): RequestListener {
  const chat = new ChatCompletions(deps, deps.upstream ?? new UpstreamDispatcher());
  const parseBody = jsonBodyParser();
  const metrics = deps.metrics;
  return (req, res) => {
    if (metrics) res.once("close", () => metrics.countHttp(CHAT_COMPLETIONS_PATH, "POST", res.statusCode));
    parseBody(req, res, (err) => {
      if (err) return writeHttpError(req, res, err, deps.log);
      chat.serve(req, res).catch((e: unknown) => writeHttpError(req, res, e, deps.log));
    });
  };
}

class ChatCompletions {
  private readonly keepaliveMs: number;
  private readonly baseUrls: Record<string, string>;
  private readonly allows: (c: DispatchCredential, modelId: string) => boolean;

  constructor(
    private readonly deps: ChatDeps,
    private readonly upstream: UpstreamDispatcher,
  ) {
    this.keepaliveMs = deps.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
    this.baseUrls = deps.providerBaseUrls ?? {};
    this.allows = (c, m) => deps.credentials.allows(c, m);
  }

  async serve(req: ParsedRequest, res: ServerResponse): Promise<void> {
    const t0 = performance.now();
    // Listening from the start: a client gone during routing or admission is never dispatched.
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const caller = await this.deps.resolveCaller(req, res);
    if (caller.key.class !== "inference") {
      throw new DomainError("permission_denied", "chat completions take an inference key");
    }
    if (caller.key.paused) {
      throw new DomainError("key_paused", `this key is paused (${caller.key.pausedReason ?? "manual"})`, {
        details: { paused_reason: caller.key.pausedReason ?? "manual" },
      });
    }
    // Header and body checks come first: a malformed request spends nothing and records nothing.
    const headers = readRouterHeaders(req);
    const request = parseChatRequest(req.body);
    const createdAt = this.deps.clock.now();
    const ctx: Context = {
      id: generationId(),
      caller,
      createdAt,
      created: Math.floor(createdAt.getTime() / 1000),
      t0,
      headers,
      request,
      promptTokens: promptTokenBound(request),
      plan: null,
      holdId: "",
      lease: null,
    };

    let credentials: DispatchCredential[];
    let warning = "";
    try {
      credentials = await this.deps.credentials.enabledFor(caller.orgId);
      const plan = await this.deps.routing.plan({
        orgId: caller.orgId,
        model: request.model ?? "",
        models: request.models ?? [],
        byokProviders: [...new Set(credentials.map((c) => c.providerSlug))],
        accountFallbackModels: [],
      });
      ctx.plan = plan;
      // Every request is BYOK, and a ceiling without include_byok counts none: when no ceiling counts
      // this request the ledger would reserve nothing, so the round trip is skipped. (Budgets the
      // ledger owns, such as workspace and agent budgets, will need it on every request.)
      const ceilings = keyCeilings(caller.key).filter((c) => c.includeByok);
      // A budget binds before routing: when Plan refused, Admit still runs as a check only.
      const worstCase = plan.refusal ? 0n : worstCaseCost(request, plan.cascade, ctx.promptTokens);
      const leases = this.deps.leases;
      if (leases && !plan.refusal && SpendLeases.serves(ceilings)) {
        ctx.lease = await leases.admit({ orgId: caller.orgId, ceilings }, worstCase);
      }
      const admission =
        ctx.lease || ceilings.length === 0
          ? NOTHING_TO_RESERVE
          : await this.deps.ledger.admit({
              requestId: ctx.id,
              orgId: caller.orgId,
              ceilings,
              worstCaseNanodollars: worstCase,
              isByok: true,
              dryRun: plan.refusal !== undefined,
            });
      if (!admission.admitted) {
        const r = admission.refusal;
        throw new Refused((r?.code || "budget_exceeded") as DomainError["code"], r?.message || "a spend limit refused this request", {
          status: r?.httpStatus || 403,
          details: { scope: r?.scope || "key" },
        });
      }
      ctx.holdId = admission.holdId;
      warning = admission.limitWarning;
      if (plan.refusal) {
        throw new Refused(plan.refusal.code as DomainError["code"], plan.refusal.message, {
          status: plan.refusal.httpStatus || 404,
          details: { unsatisfied_filters: plan.refusal.unsatisfiedFilters },
        });
      }
      if (!plan.cascade.length) {
        throw new Refused("no_route", "no endpoint can serve this request", { details: { unsatisfied_filters: [] } });
      }
    } catch (err) {
      this.failBeforeDispatch(ctx, err, res);
      return;
    }

    const extraHeaders: Record<string, string> = warning ? { "x-router-limit-warning": headerSafe(warning) } : {};
    const input: CascadeInput = {
      candidates: ctx.plan?.cascade ?? [],
      credentials,
      allows: this.allows,
      request,
      vendorBeta: headers.vendorBeta,
      providerBaseUrls: this.baseUrls,
      signal: abort.signal,
    };
    if (request.stream) await this.stream(ctx, input, extraHeaders, res);
    else await this.complete(ctx, input, extraHeaders, res);
  }

  /** Refusals and service failures before any provider was asked: answered, released, recorded. */
  private failBeforeDispatch(ctx: Context, err: unknown, res: ServerResponse): void {
    const domain = err instanceof DomainError ? err : new DomainError("internal", "internal error", { cause: err });
    if (!(err instanceof DomainError)) this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
    const outcome = this.outcome(ctx, {
      status: err instanceof Refused ? "refused" : "error",
      errorCode: domain.code,
      errorMessage: domain.message,
    });
    this.finish(ctx, outcome, null);
    this.sendError(res, domain, ctx, null, null);
  }

  private async complete(ctx: Context, input: CascadeInput, extraHeaders: Record<string, string>, res: ServerResponse): Promise<void> {
    let result: CompletionResult;
    try {
      result = await this.upstream.complete(input);
    } catch (err) {
      this.unexpected(ctx, err, res);
      return;
    }
    const served = result.served;
    const completion = result.completion;
    if (!served || !completion) {
      const cancelled = input.signal.aborted;
      const { error } = this.finishUnserved(ctx, result, cancelled);
      if (!cancelled) this.sendError(res, error, ctx, result, result.failure);
      return;
    }
    if (ctx.request.reasoning?.exclude) {
      for (const c of completion.choices) {
        delete c.message.reasoning;
        delete c.message.reasoning_details;
      }
    }
    const usage = completion.usage ?? estimatedUsage(ctx.promptTokens, completionChars(completion));
    const first = completion.choices[0];
    const elapsed = performance.now() - ctx.t0;
    const outcome = this.outcome(ctx, {
      status: "complete",
      served: served.candidate,
      usage,
      finishReason: first?.finish_reason ?? null,
      nativeFinishReason: first?.native_finish_reason ?? null,
      ttftMs: elapsed,
      generationMs: result.attempts[result.attempts.length - 1]?.durationMs ?? null,
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
    });
    this.finish(ctx, outcome, served);
    const body: Record<string, unknown> = {
      id: ctx.id,
      object: "chat.completion",
      created: ctx.created,
      model: served.candidate.modelId,
      provider: served.candidate.providerSlug,
      choices: completion.choices.map((c) => ({
        index: c.index,
        message: c.message,
        logprobs: null,
        finish_reason: c.finish_reason,
        native_finish_reason: c.native_finish_reason,
      })),
      usage: usageBody(usage),
    };
    if (ctx.headers.metadata) body.router_metadata = this.metadata(ctx, result, outcome.routingOverheadMs);
    writeJson(res, 200, body, extraHeaders);
  }

  private async stream(ctx: Context, input: CascadeInput, extraHeaders: Record<string, string>, res: ServerResponse): Promise<void> {
    const sse = new SseResponse(res, this.keepaliveMs);
    sse.open(extraHeaders);
    const exclude = ctx.request.reasoning?.exclude === true;
    let prefix = "";
    let chars = 0;
    const sink = {
      commit: (served: Served) => {
        // Only the choices are serialised per chunk; the envelope is fixed once the stream commits.
        prefix = chunkPrefix(ctx, served.candidate);
      },
      chunk: (choices: ChunkChoice[]) => {
        for (const c of choices) {
          const d = c.delta;
          if (exclude) {
            delete d.reasoning;
            delete d.reasoning_details;
          }
          chars += (d.content?.length ?? 0) + (d.reasoning?.length ?? 0);
          if (d.tool_calls) for (const t of d.tool_calls) chars += t.function?.arguments?.length ?? 0;
        }
        sse.data(`${prefix}${JSON.stringify(choices)}}`);
      },
    };
    try {
      await this.streamThrough(ctx, input, sse, sink, () => chars);
    } finally {
      // Whatever happened above, the keepalive timer must not outlive the request.
      sse.stop();
    }
  }

  private async streamThrough(
    ctx: Context,
    input: CascadeInput,
    sse: SseResponse,
    sink: StreamSink,
    streamedChars: () => number,
  ): Promise<void> {
    let result: StreamResult;
    try {
      result = await this.upstream.stream(input, sink);
    } catch (err) {
      this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
      const outcome = this.outcome(ctx, { status: "error", errorCode: "internal", errorMessage: "internal error" });
      this.finish(ctx, outcome, null);
      const meta = ctx.headers.metadata ? this.metadata(ctx, null, null) : null;
      sse.data(JSON.stringify(errorChunk(ctx, ctx.request.model ?? "", null, new DomainError("internal", "internal error"), null, meta)));
      sse.done();
      return;
    }
    const cancelled = input.signal.aborted;
    const served = result.served;
    if (!served) {
      const { error, outcome } = this.finishUnserved(ctx, result, cancelled);
      if (!cancelled) {
        const meta = ctx.headers.metadata ? this.metadata(ctx, result, outcome.routingOverheadMs) : null;
        sse.data(JSON.stringify(errorChunk(ctx, ctx.request.model ?? "", null, error, null, meta)));
      }
      sse.done();
      return;
    }

    const failure = result.failure;
    const usage = streamUsage(result.usage, estimatedUsage(ctx.promptTokens, streamedChars()), cancelled || failure !== null);
    const end = performance.now();
    const outcome = this.outcome(ctx, {
      status: cancelled ? "cancelled" : failure ? "error" : "complete",
      served: served.candidate,
      usage,
      finishReason: failure && !cancelled ? "error" : result.finishReason,
      nativeFinishReason: result.nativeFinishReason,
      ttftMs: result.firstContentAt === null ? null : result.firstContentAt - ctx.t0,
      generationMs: result.firstContentAt === null ? null : end - result.firstContentAt,
      // A stream that broke after committing is recorded on its attempt, not on the request.
      errorCode: null,
      errorMessage: null,
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
    });
    this.finish(ctx, outcome, served);
    if (cancelled) {
      sse.stop();
      return;
    }
    const meta = ctx.headers.metadata ? this.metadata(ctx, result, outcome.routingOverheadMs) : null;
    if (failure) {
      const error = new DomainError("upstream_error", failure.clientMessage, { status: 502 });
      sse.data(JSON.stringify(errorChunk(ctx, served.candidate.modelId, served.candidate.providerSlug, error, usage, meta)));
    } else {
      const last: Record<string, unknown> = {
        id: ctx.id,
        object: "chat.completion.chunk",
        created: ctx.created,
        model: served.candidate.modelId,
        provider: served.candidate.providerSlug,
        choices: [],
        usage: usageBody(usage),
      };
      if (meta) last.router_metadata = meta;
      sse.data(JSON.stringify(last));
    }
    sse.done();
  }

  /** Nothing was served (every candidate failed, or the client left): recorded and released. */
  private finishUnserved(
    ctx: Context,
    result: CompletionResult | StreamResult,
    cancelled: boolean,
  ): { error: DomainError; outcome: RequestOutcome } {
    const error = dispatchError(result, cascadeModels(ctx));
    const outcome = this.outcome(ctx, {
      status: cancelled ? "cancelled" : "error",
      errorCode: result.failure?.code ?? (cancelled ? CANCELLED : error.code),
      errorMessage: result.failure?.recordMessage ?? error.message,
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
    });
    this.finish(ctx, outcome, null);
    return { error, outcome };
  }

  /** A bug inside dispatch: never a hang, never a lost hold. */
  private unexpected(ctx: Context, err: unknown, res: ServerResponse): void {
    this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
    const outcome = this.outcome(ctx, { status: "error", errorCode: "internal", errorMessage: "internal error" });
    this.finish(ctx, outcome, null);
    this.sendError(res, new DomainError("internal", "internal error"), ctx, null, null);
  }

  private outcome(
    ctx: Context,
    o: Partial<Omit<RequestOutcome, "routingOverheadMs">> & Pick<RequestOutcome, "status"> & { upstreamMs?: number },
  ): RequestOutcome {
    const usage = o.usage ?? null;
    const lines = usage && o.served ? usageLines(usage, o.served) : [];
    const dispatched = (o.attempts?.length ?? 0) > 0;
    return {
      id: ctx.id,
      caller: ctx.caller,
      createdAt: ctx.createdAt,
      headers: ctx.headers,
      requestedModel: ctx.request.model ?? "",
      sessionId: ctx.request.session_id ?? ctx.headers.sessionId,
      runId: ctx.request.run_id ?? null,
      streamed: ctx.request.stream === true,
      status: o.status,
      served: o.served ?? null,
      finishReason: o.finishReason ?? (o.status === "error" ? "error" : null),
      nativeFinishReason: o.nativeFinishReason ?? null,
      usage,
      lines,
      listCost: totalCost(lines),
      // BYOK: the account is charged the BYOK fee, 0 in this release; list cost is what limits measure.
      billedCost: 0n,
      ttftMs: o.ttftMs ?? null,
      generationMs: o.generationMs ?? null,
      routingOverheadMs: dispatched ? Math.max(0, performance.now() - ctx.t0 - (o.upstreamMs ?? 0)) : null,
      errorCode: o.errorCode ?? null,
      errorMessage: o.errorMessage ?? null,
      attempts: o.attempts ?? [],
    };
  }

  /**
   * Makes the generation readable at once, then settles and publishes off the response path: the
   * hold is settled with the actual list cost, or released when nothing was served.
   */
  private finish(ctx: Context, outcome: RequestOutcome, served: Served | null): void {
    const event = completedEvent(outcome);
    this.deps.recent.put(ctx.caller.orgId, generationRecordOf(event));
    this.deps.metrics?.chatFinished(outcome);
    setImmediate(() => {
      const { closings, bus, log, credentials } = this.deps;
      if (ctx.holdId) {
        if (served) closings.settle(ctx.holdId, outcome.listCost, outcome.billedCost);
        else closings.release(ctx.holdId);
      }
      if (ctx.lease) {
        this.deps.leases?.finish(ctx.lease, ctx.id, served ? { list: outcome.listCost, billed: outcome.billedCost } : null);
      }
      if (served) credentials.markUsed(served.credential.id, this.deps.clock.now());
      for (const a of outcome.attempts) {
        if (a.errorCode) {
          log.warn(
            { id: ctx.id, provider: a.candidate.providerSlug, endpoint: a.candidate.endpointId, status: a.httpStatus, code: a.errorCode },
            "gateway.upstream.call_failed",
          );
        }
      }
      bus
        .publish({
          topic: REQUEST_COMPLETED_TOPIC,
          key: ctx.caller.orgId,
          type: REQUEST_COMPLETED_TOPIC,
          // The generation id: a re-publish of the same request is the same event for consumers.
          id: ctx.id,
          payload: events.RequestCompleted.encode(event).finish(),
        })
        .catch((err: unknown) => log.error({ err, id: ctx.id }, "gateway.event.publish_failed"));
    });
  }

  private metadata(ctx: Context, result: CompletionResult | StreamResult | null, overhead: number | null): Record<string, unknown> | null {
    if (!ctx.plan) return null;
    return routerMetadata({
      id: ctx.id,
      requested: ctx.request.model ?? "",
      models: ctx.request.models ?? [],
      plan: ctx.plan,
      attempts: result?.attempts ?? [],
      skipped: result?.skipped ?? [],
      served: result?.served?.candidate ?? null,
      routingOverheadMs: overhead === null ? null : Math.round(overhead),
    });
  }

  private sendError(
    res: ServerResponse,
    err: DomainError,
    ctx: Context,
    result: CompletionResult | null,
    failure: AttemptFailure | null,
  ): void {
    const body: Record<string, unknown> = { ...errorBody(err.status, err.code, err.message, err.details) };
    if (ctx.headers.metadata && ctx.plan) body.router_metadata = this.metadata(ctx, result, null);
    if (failure?.opts.retryAfter && err.status === 429) res.setHeader("retry-after", failure.opts.retryAfter);
    writeJson(res, err.status, body);
  }
}
