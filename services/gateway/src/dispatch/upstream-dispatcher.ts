import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import { adapterFor } from "@router/providers";
import { withinMaxOutput } from "@router/providers";
import { fitToEndpoint } from "@router/providers";
import {
  ProviderBodyError,
  UnsupportedRequest,
  UpstreamAuthError,
  type ChunkChoice,
  type Completion,
  type EmbeddingsAdapter,
  type EmbeddingsRequest,
  type StreamEvent,
  type UpstreamHttpRequest,
  type UpstreamTarget,
} from "@router/providers";
import { randomId } from "@router/random-tokens";
import { AttemptFailure, failureFromError, notSent } from "./attempt-failure";
import { CascadeWalk, type PlannedAttempt } from "./cascade-walk";
import { BreakerOpen, EndpointBreakers, type BreakerOptions, type CircuitListener } from "./endpoint-breakers";
import { StreamEventReader } from "./stream-reader";
import type { Attempt, CascadeInput, CascadeResult, CompletionResult, EmbeddingsResult, Skip, StreamResult, StreamSink } from "./types";
import { UpstreamClient, type UpstreamTimeouts, type WholeAnswer } from "./upstream-client";
import { credentialServes, lacksDeployment, upstreamTarget } from "./upstream-target";

export interface UpstreamDispatcherOptions {
  timeouts?: Partial<UpstreamTimeouts>;
  breaker?: Partial<BreakerOptions>;
  onCircuitChange?: CircuitListener;
}

const attemptId = (): string => `att_${randomId(12, "base64url")}`;

/** A stream up to its first content chunk: what came before it, the chunk, and the rest still to read. */
interface FirstContent {
  reader: StreamEventReader;
  body: Dispatcher.ResponseData["body"];
  pre: StreamEvent[];
  first: StreamEvent & { type: "chunk" };
}

const hasFinish = (choices: ChunkChoice[]): boolean => choices.some((c) => c.finish_reason !== null);

/** An answer that ended in `error` with nothing in it: a failure before content, not an empty answer. */
function errorFinish(choices: Array<{ finish_reason: string | null; native_finish_reason: string | null }>): AttemptFailure["opts"] | null {
  const c = choices.find((x) => x.finish_reason === "error");
  return c ? { providerCode: c.native_finish_reason, detail: c.native_finish_reason } : null;
}

/**
 * Walks the cascade: each endpoint with the organisation's credential for its provider, skipping
 * endpoints whose circuit is open, moving on after a failure that allows it, and never after the
 * first content chunk of a stream was handed to the sink.
 */
export class UpstreamDispatcher {
  readonly client: UpstreamClient;
  readonly breakers: EndpointBreakers;

  constructor(opts: UpstreamDispatcherOptions = {}) {
    this.client = new UpstreamClient(opts.timeouts);
    this.breakers = new EndpointBreakers(opts.breaker, opts.onCircuitChange);
  }

  async close(): Promise<void> {
    this.breakers.shutdown();
    await this.client.close();
  }

  /** The dispatch plan: every endpoint of the cascade with each credential that may serve it. */
  private prepare(input: CascadeInput, skipped: Skip[], embeddings: boolean): PlannedAttempt[] {
    const out: PlannedAttempt[] = [];
    for (const candidate of input.candidates) {
      const adapter = adapterFor(candidate.apiFamily, candidate.providerSlug);
      if (!adapter || (embeddings && !adapter.embeddings)) {
        skipped.push({ candidate, reason: "no_adapter" });
        continue;
      }
      const usable = input.credentials.filter(
        (c) => c.providerSlug === candidate.providerSlug && credentialServes(c, candidate) && input.allows(c, candidate.modelId),
      );
      if (usable.length === 0) skipped.push({ candidate, reason: lacksDeployment(input.credentials, candidate) ? "no_deployment" : "no_credential" });
      for (const credential of usable) out.push({ index: out.length + 1, candidate, credential, adapter });
    }
    return out;
  }

  private walk(input: CascadeInput, skipped: Skip[], embeddings = false): CascadeWalk {
    return new CascadeWalk(this.prepare(input, skipped, embeddings), skipped, (id) => this.breakers.isOpen(id));
  }

  private target(p: PlannedAttempt, input: CascadeInput): UpstreamTarget {
    return upstreamTarget(p.candidate, p.credential, input.providerBaseUrls, input.vendorBeta);
  }

  private build(p: PlannedAttempt, input: CascadeInput, stream: boolean): UpstreamHttpRequest {
    const c = p.candidate;
    try {
      // The catalog's parameter list for this endpoint decides what of the request it is sent.
      const { request } = fitToEndpoint(withinMaxOutput(input.request, c.maxOutputTokens), c);
      // A body in the endpoint's own wire format goes as the client wrote it, but for what Router acts on.
      const native = input.native;
      if (native && native.family === p.adapter.family && p.adapter.buildNativeRequest) {
        return p.adapter.buildNativeRequest(native.body, request, this.target(p, input), stream);
      }
      return p.adapter.buildRequest(request, this.target(p, input), stream);
    } catch (err) {
      if (err instanceof UnsupportedRequest) {
        throw new AttemptFailure("unsupported", c.providerSlug, { detail: err.message });
      }
      throw notSent(err, c.providerSlug);
    }
  }

  /** The built request with what proves who is calling, for adapters that add it last (a signature, a token). */
  private async authorized(p: PlannedAttempt, input: CascadeInput, req: UpstreamHttpRequest): Promise<UpstreamHttpRequest> {
    if (!p.adapter.authorize) return req;
    try {
      return await p.adapter.authorize(req, this.target(p, input), input.signal);
    } catch (err) {
      if (err instanceof UpstreamAuthError) {
        throw new AttemptFailure("auth", p.candidate.providerSlug, { detail: err.reason });
      }
      throw failureFromError(err, p.candidate.providerSlug, input.signal.aborted, false);
    }
  }

  /** A refused streamed request: its body is read for the provider's error, which the status alone may have to do without. */
  private async streamFailure(res: Dispatcher.ResponseData, p: PlannedAttempt): Promise<AttemptFailure> {
    let text = "";
    try {
      text = await res.body.text();
    } catch {
      // the status alone is enough to go on
    }
    return this.httpFailure({ statusCode: res.statusCode, headers: res.headers, text }, p);
  }

  private httpFailure(res: WholeAnswer, p: PlannedAttempt): AttemptFailure {
    const err = p.adapter.parseError(res.text, res.headers);
    // Azure OpenAI says how long in milliseconds; the record keeps seconds, as Retry-After does.
    const retryMs = Number(res.headers["retry-after-ms"]);
    const retry = Number.isFinite(retryMs) && retryMs > 0 ? String(Math.ceil(retryMs / 1000)) : res.headers["retry-after"];
    return new AttemptFailure("http", p.candidate.providerSlug, {
      httpStatus: res.statusCode,
      providerCode: err.code,
      providerMessage: err.message,
      retryAfter: typeof retry === "string" ? retry : null,
    });
  }

  /** A non-stream completion. */
  async complete(input: CascadeInput): Promise<CompletionResult> {
    const { answer, ...result } = await this.whole(input, false, {
      build: (p) => this.build(p, input, false),
      parse: (p, json) => {
        const completion = p.adapter.parseCompletion(json);
        const failed = errorFinish(completion.choices);
        if (failed && isEmpty(completion)) throw new AttemptFailure("error_finish", p.candidate.providerSlug, failed);
        return completion;
      },
    });
    return { ...result, completion: answer };
  }

  /** Embeddings of every input, from the first endpoint of the cascade that answers them all. */
  async embed(input: CascadeInput, request: EmbeddingsRequest): Promise<EmbeddingsResult> {
    // `prepare` left out every endpoint whose adapter has no embeddings API.
    const api = (p: PlannedAttempt): EmbeddingsAdapter => p.adapter.embeddings as EmbeddingsAdapter;
    const { answer, ...result } = await this.whole(input, true, {
      build: (p) => {
        try {
          return api(p).buildRequest(request, this.target(p, input));
        } catch (err) {
          // A request the model cannot take (Titan embeds one text a call): the next endpoint may; none, a 400.
          if (err instanceof UnsupportedRequest) throw new AttemptFailure("unsupported", p.candidate.providerSlug, { detail: err.message });
          throw notSent(err, p.candidate.providerSlug);
        }
      },
      parse: (p, json) => api(p).parse(json, request.input.length),
    });
    return { ...result, embeddings: answer };
  }

  /** One whole (non-stream) answer: each planned attempt in turn until one answers in its provider's format. */
  private async whole<T>(
    input: CascadeInput,
    embeddings: boolean,
    ops: { build(p: PlannedAttempt): UpstreamHttpRequest; parse(p: PlannedAttempt, json: unknown): T },
  ): Promise<CascadeResult & { answer: T | null }> {
    const result: CascadeResult & { answer: T | null } = { attempts: [], skipped: [], served: null, failure: null, upstreamMs: 0, answer: null };
    const walk = this.walk(input, result.skipped, embeddings);
    for (const p of walk) {
      if (input.signal.aborted) break;
      const slug = p.candidate.providerSlug;
      const startedAtMs = Date.now();
      const t0 = performance.now();
      const reached = { status: null as number | null };
      try {
        const answer = await this.breakers.run(p.candidate.endpointId, async () => {
          const req = await this.authorized(p, input, ops.build(p));
          let res: WholeAnswer;
          try {
            res = await this.client.sendWhole(req, input.signal, reached);
          } catch (err) {
            throw failureFromError(err, slug, input.signal.aborted, false);
          }
          if (res.statusCode >= 300) throw this.httpFailure(res, p);
          let json: unknown;
          try {
            json = JSON.parse(res.text);
          } catch {
            throw new AttemptFailure("bad_response", slug, { detail: "not the provider's JSON format" });
          }
          try {
            return ops.parse(p, json);
          } catch (err) {
            if (err instanceof AttemptFailure) throw err;
            if (err instanceof ProviderBodyError) {
              throw new AttemptFailure("bad_response", slug, {
                providerCode: err.error.code,
                providerMessage: err.error.message,
                detail: err.error.code,
              });
            }
            throw new AttemptFailure("bad_response", slug, { detail: "not the provider's JSON format" });
          }
        }, { regardless: p.circuitOpen });
        const duration = performance.now() - t0;
        result.upstreamMs += duration;
        result.attempts.push(record(p, startedAtMs, duration, duration, null, reached.status));
        result.served = { candidate: p.candidate, credential: p.credential };
        result.answer = answer;
        return result;
      } catch (err) {
        if (!failedBeforeContent(result, walk, { p, err, aborted: input.signal.aborted, startedAtMs, t0, status: reached.status })) break;
      }
    }
    return result;
  }

  /** A stream: content goes to `sink` from the first content chunk on. */
  async stream(input: CascadeInput, sink: StreamSink): Promise<StreamResult> {
    const result: StreamResult = {
      attempts: [],
      skipped: [],
      served: null,
      failure: null,
      upstreamMs: 0,
      usage: null,
      finishReason: null,
      nativeFinishReason: null,
      firstContentAt: null,
    };
    const walk = this.walk(input, result.skipped);
    for (const p of walk) {
      if (input.signal.aborted) break;
      const slug = p.candidate.providerSlug;
      const startedAtMs = Date.now();
      const t0 = performance.now();
      const reached = { status: null as number | null };
      let opened: FirstContent;
      try {
        const keepNative = sink.nativeFamily === p.adapter.family;
        opened = await this.breakers.run(p.candidate.endpointId, () => this.untilFirstContent(p, input, reached, keepNative), {
          regardless: p.circuitOpen,
        });
      } catch (err) {
        const status = reached.status;
        if (failedBeforeContent(result, walk, { p, err, aborted: input.signal.aborted, startedAtMs, t0, status })) continue;
        break;
      }

      // Committed: from here on nothing moves to another endpoint.
      result.failure = null;
      result.firstContentAt = performance.now();
      const ttft = result.firstContentAt - t0;
      const served = { candidate: p.candidate, credential: p.credential };
      result.served = served;
      sink.commit(served);
      const take = (ev: StreamEvent): boolean => {
        switch (ev.type) {
          case "chunk": {
            const c = ev.choices[0];
            if (c?.finish_reason) {
              result.finishReason = c.finish_reason;
              result.nativeFinishReason = c.native_finish_reason;
            }
            sink.chunk(ev.choices);
            return false;
          }
          case "usage":
            result.usage = ev.usage;
            return false;
          case "error":
            result.failure = new AttemptFailure("stream_error", slug, { providerCode: ev.code, providerMessage: ev.message });
            return true;
          case "done":
            return true;
          case "native":
            sink.native?.(ev.message);
            return false;
        }
      };
      for (const ev of opened.pre) take(ev);
      let finished = take(opened.first);
      while (!finished) {
        let ev: StreamEvent | null;
        try {
          ev = await opened.reader.next();
        } catch (err) {
          // After the provider's finish reason only its end marker was missing: the answer is whole.
          if (!result.finishReason || input.signal.aborted) result.failure = failureFromError(err, slug, input.signal.aborted, true);
          break;
        }
        if (ev === null) {
          // A clean end without the provider's end marker is complete only if a finish reason came.
          if (!result.finishReason) {
            result.failure = new AttemptFailure("stream_broken", slug, { detail: "ended without a finish reason" });
          }
          break;
        }
        finished = take(ev);
      }
      // Drains what the provider still sends so the connection can be reused; if that fails the
      // connection is closed instead, which costs nothing the request needs.
      if (!opened.body.destroyed) opened.body.dump().catch(() => undefined);
      const duration = performance.now() - t0;
      result.upstreamMs += duration;
      result.attempts.push(record(p, startedAtMs, duration, ttft, result.failure, reached.status, true));
      return result;
    }
    return result;
  }

  private async untilFirstContent(p: PlannedAttempt, input: CascadeInput, reached: { status: number | null }, keepNative: boolean): Promise<FirstContent> {
    const slug = p.candidate.providerSlug;
    const req = await this.authorized(p, input, this.build(p, input, true));
    let res: Dispatcher.ResponseData;
    try {
      res = await this.client.send(req, true, input.signal);
      reached.status = res.statusCode;
    } catch (err) {
      throw failureFromError(err, slug, input.signal.aborted, false);
    }
    if (res.statusCode >= 300) throw await this.streamFailure(res, p);
    const reader = new StreamEventReader(res.body[Symbol.asyncIterator](), p.adapter.createStreamDecoder(keepNative), p.adapter.createFramer);
    const pre: StreamEvent[] = [];
    try {
      for (;;) {
        const ev = await reader.next();
        if (ev === null) throw new AttemptFailure("empty_stream", slug);
        if (ev.type === "error") {
          throw new AttemptFailure("stream_error", slug, { providerCode: ev.code, providerMessage: ev.message });
        }
        if (ev.type === "done") throw new AttemptFailure("empty_stream", slug);
        // A finish before any content is a complete, empty answer (e.g. filtered), not a broken
        // stream, unless the finish itself says the provider failed.
        if (ev.type === "chunk" && (ev.content || hasFinish(ev.choices))) {
          const failed = ev.content ? null : errorFinish(ev.choices);
          if (failed) throw new AttemptFailure("error_finish", slug, failed);
          return { reader, body: res.body, pre, first: ev };
        }
        pre.push(ev);
      }
    } catch (err) {
      res.body.destroy();
      throw failureFromError(err, slug, input.signal.aborted, false);
    }
  }
}

/**
 * Records a dispatch that failed before any content (or was skipped by an open circuit) and
 * answers whether the walk moves on to the next candidate.
 */
function failedBeforeContent(
  result: CascadeResult,
  walk: CascadeWalk,
  a: { p: PlannedAttempt; err: unknown; aborted: boolean; startedAtMs: number; t0: number; status: number | null },
): boolean {
  if (a.err instanceof BreakerOpen) {
    result.skipped.push({ candidate: a.p.candidate, reason: "circuit_open" });
    return true;
  }
  const failure = failureFromError(a.err, a.p.candidate.providerSlug, a.aborted, false);
  const duration = performance.now() - a.t0;
  result.upstreamMs += duration;
  result.attempts.push(record(a.p, a.startedAtMs, duration, null, failure, a.status));
  result.failure = failure;
  if (!failure.failover) return false;
  walk.failed(a.p, failure);
  return true;
}

function isEmpty(c: Completion): boolean {
  return c.choices.every((x) => !x.message.content && !x.message.tool_calls?.length && !x.message.reasoning);
}

function record(
  p: PlannedAttempt,
  startedAtMs: number,
  durationMs: number,
  ttftMs: number | null,
  failure: AttemptFailure | null,
  /** The status the provider answered with; null when it was never reached. */
  httpStatus: number | null,
  committed = false,
): Attempt {
  return {
    id: attemptId(),
    attempt: p.index,
    candidate: p.candidate,
    credentialId: p.credential.id,
    status: failure && !committed ? "error" : "ok",
    httpStatus: failure?.httpStatus ?? httpStatus,
    errorCode: failure ? failure.code : null,
    errorMessage: failure ? failure.recordMessage : null,
    startedAtMs,
    durationMs: Math.round(durationMs),
    ttftMs: ttftMs === null ? null : Math.round(ttftMs),
    circuitOpen: p.circuitOpen === true,
  };
}
