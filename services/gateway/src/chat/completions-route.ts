import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { DomainError } from "@router/errors";
import { jsonBodyParser, REQUEST_ID_HEADER, writeHttpError } from "@router/http-kit";
import type { Caller } from "../auth/caller";
import type { CascadeInput, Candidate } from "../dispatch/types";
import { UpstreamDispatcher } from "../dispatch/upstream-dispatcher";
import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import { ChatAdmission, type Admitted } from "./admission";
import { cascadeForBuiltinTools, droppedBuiltinTools, droppedToolsHeader } from "./builtin-tools";
import { maxTokensHeader } from "./max-tokens-header";
import { newChatContext, newGenerationId, type ChatContext } from "./chat-context";
import type { ChatDeps } from "./chat-deps";
import { sendChatError } from "./error-response";
import { Finishing } from "./finishing";
import { chatCompletionsIngress } from "../ingress/chat-completions";
import type { AnyIngress } from "../ingress/ingress";
import { JsonResponder } from "./json-responder";
import { readRouterHeaders } from "../request-model/router-headers";
import { EmbeddingsResponder } from "./embeddings-responder";
import { DEFAULT_KEEPALIVE_MS } from "../ingress/sse-response";
import { StreamResponder } from "./stream-responder";

export { CHAT_COMPLETIONS_PATH } from "../ingress/chat-completions";

type ParsedRequest = IncomingMessage & { body?: unknown };

// Header values must be visible ASCII; a ledger sentence is, but a stray character must not 500.
const headerSafe = (s: string): string => s.replace(/[^\x20-\x7e]/g, "?");

/** One inference route served on Node's own request and response, for `routeAhead`. */
export interface InferenceRoute {
  method: "POST";
  path: string;
  listener: RequestListener;
}

/**
 * The inference routes, one per ingress (chat completions, Responses, Anthropic Messages, embeddings), on Node's
 * own request and response: the hot path skips express's router and its request and response
 * wrappers (docs/adr, ADR 0097). Every ingress runs the same pipeline; only parsing and rendering
 * differ. The body is parsed by the same parser as every express route (with the format's own size
 * limit, Anthropic's 32 MB for Messages), before authentication.
 */
export function inferenceRoutes(deps: ChatDeps, ingresses: AnyIngress[]): InferenceRoute[] {
  const chat = new ChatCompletions(deps, deps.upstream ?? new UpstreamDispatcher());
  const defaultParser = jsonBodyParser();
  const metrics = deps.metrics;
  return ingresses.map((ingress): InferenceRoute => {
    const parseBody = ingress.bodyLimit ? jsonBodyParser(ingress.bodyLimit) : defaultParser;
    return {
      method: "POST",
      path: ingress.path,
      listener: (req, res) => {
        if (metrics) res.once("close", () => metrics.countHttp(ingress.path, "POST", res.statusCode));
        // The generation id is the request id from the start: every answer carries it, errors included.
        const id = newGenerationId();
        res.setHeader(REQUEST_ID_HEADER, id);
        parseBody(req, res, (err) => {
          if (err) return writeHttpError(req, res, err, deps.log, ingress.errorBody);
          chat.serve(req, res, ingress, id).catch((e: unknown) => writeHttpError(req, res, e, deps.log, ingress.errorBody));
        });
      },
    };
  });
}

/** `POST /v1/chat/completions` alone (tests that need no other ingress). */
export function chatCompletionsListener(deps: ChatDeps): RequestListener {
  const [route] = inferenceRoutes(deps, [chatCompletionsIngress]);
  return route!.listener;
}

/**
 * The stages of one inference request: the caller and the request checked, admission (route and
 * reserve), then the JSON, the stream or the embeddings responder, each of which ends in `Finishing`.
 */
class ChatCompletions {
  private readonly baseUrls: Record<string, string>;
  private readonly allows: (c: DispatchCredential, modelId: string) => boolean;
  private readonly admission: ChatAdmission;
  private readonly finishing: Finishing;
  private readonly json: JsonResponder;
  private readonly streams: StreamResponder;
  private readonly embeddings: EmbeddingsResponder;

  constructor(
    private readonly deps: ChatDeps,
    upstream: UpstreamDispatcher,
  ) {
    this.baseUrls = deps.providerBaseUrls ?? {};
    this.allows = (c, m) => deps.credentials.allows(c, m);
    this.admission = new ChatAdmission(deps, () => upstream.breakers.openEndpoints());
    this.finishing = new Finishing(deps);
    this.json = new JsonResponder(upstream, this.finishing);
    this.streams = new StreamResponder(upstream, this.finishing, deps.keepaliveMs ?? DEFAULT_KEEPALIVE_MS);
    this.embeddings = new EmbeddingsResponder(upstream, this.finishing);
  }

  async serve(req: ParsedRequest, res: ServerResponse, ingress: AnyIngress, id: string): Promise<void> {
    const t0 = performance.now();
    // Listening from the start: a client gone during routing or admission is never dispatched.
    const abort = new AbortController();
    const forget = this.deps.drain?.cutsWith(abort);
    res.on("close", () => {
      forget?.();
      if (!res.writableFinished) abort.abort();
    });
    ingress.prepare?.(req);
    const caller = await this.deps.resolveCaller(req, res);
    mayChat(caller);
    // The organisation's request-rate tier (by lifetime credit purchase) counts every inference request.
    await this.deps.rateTiers?.admit(caller.orgId, res);
    // Header and body checks come first: a malformed request spends nothing and records nothing.
    const headers = readRouterHeaders(req);
    const now = this.deps.clock.now();
    if (ingress.kind === "embeddings") {
      const { request, options } = ingress.parse(req.body);
      const ctx = newChatContext(caller, headers, request, now, t0, ingress, null, null, id);
      const admitted = await this.admit(ctx, res, abort.signal);
      if (admitted) await this.embeddings.respond(ctx, options, admitted.input, admitted.extraHeaders, res);
      return;
    }
    // Before parsing: what the organisation stored completes the body (Responses `previous_response_id`).
    const body = ingress.expand ? await ingress.expand(req.body, caller) : req.body;
    const { request, echo, native, builtinTools, toolNames, storedInput } = ingress.parse(body);
    const ctx = newChatContext(caller, headers, request, now, t0, ingress, echo, native ?? null, id);
    if (builtinTools) ctx.builtinTools = builtinTools;
    if (toolNames) ctx.toolNames = toolNames;
    if (storedInput) ctx.storedInput = storedInput;
    const admitted = await this.admit(ctx, res, abort.signal);
    if (!admitted) return;
    if (request.stream) await this.streams.respond(ctx, admitted.input, admitted.extraHeaders, res);
    else await this.json.respond(ctx, admitted.input, admitted.extraHeaders, res);
  }

  /** Admission, and what dispatch is given; null when it refused (the refusal is answered). */
  private async admit(ctx: ChatContext, res: ServerResponse, signal: AbortSignal): Promise<{ input: CascadeInput; extraHeaders: Record<string, string> } | null> {
    let admitted: Admitted;
    let candidates: Candidate[];
    try {
      admitted = await this.admission.admit(ctx);
      candidates = cascadeForBuiltinTools(ctx.plan?.cascade ?? [], ctx.builtinTools, ctx.request.provider?.require_parameters === true, ctx.native);
    } catch (err) {
      sendChatError(res, this.finishing.beforeDispatch(ctx, err), ctx, null, null);
      return null;
    }
    const extraHeaders: Record<string, string> = admitted.warning
      ? { "x-router-limit-warning": headerSafe(admitted.warning) }
      : {};
    // A stream's headers leave before any provider answers: they name what the first endpoint drops
    // and clamps (a whole answer's name what its server did; the record always names what it dropped).
    if (ctx.request.stream && candidates[0]) {
      Object.assign(extraHeaders, droppedToolsHeader(droppedBuiltinTools(ctx.builtinTools, candidates[0], ctx.native)), maxTokensHeader(ctx.request, candidates[0]));
    }
    const input: CascadeInput = {
      candidates,
      credentials: admitted.credentials,
      allows: this.allows,
      // With a preset's settings filled in by admission.
      request: ctx.request,
      native: ctx.native,
      vendorBeta: ctx.headers.vendorBeta,
      providerBaseUrls: this.baseUrls,
      signal,
    };
    return { input, extraHeaders };
  }
}

/** Only an inference key that is not paused may ask for completions. */
function mayChat(caller: Caller): void {
  if (caller.key.class !== "inference") {
    throw new DomainError("permission_denied", "chat completions take an inference key");
  }
  if (caller.key.paused) {
    throw new DomainError("key_paused", `this key is paused (${caller.key.pausedReason ?? "manual"})`, {
      details: { paused_reason: caller.key.pausedReason ?? "manual" },
    });
  }
}
