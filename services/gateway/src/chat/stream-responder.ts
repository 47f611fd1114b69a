import { StreamedToolCalls } from "./tool-call-check";
import type { ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { DomainError } from "@router/errors";
import type { UpstreamDispatcher } from "../dispatch/upstream-dispatcher";
import type { CascadeInput, Served, StreamResult, StreamSink } from "../dispatch/types";
import type { IngressStream } from "../ingress/ingress";
import type { ChunkChoice } from "@router/providers";
import type { Ingress } from "../ingress/ingress";
import type { ChatContext } from "./chat-context";
import { interruptionOf, type Finishing } from "./finishing";
import { GATEWAY_SHUTDOWN } from "../shutdown/drain";
import { outcomeOf } from "./request-outcome";
import { requestMetadata } from "./router-metadata";
import { SseResponse } from "../ingress/sse-response";
import { estimatedUsage, streamUsage } from "../spend/usage-cost";

/**
 * Answers a stream request with server-sent events: status and headers at once (with the first
 * keepalive), then the ingress's events from the first content chunk on, ending with usage, or
 * with an error when the stream broke.
 */
export class StreamResponder {
  constructor(
    private readonly upstream: UpstreamDispatcher,
    private readonly finishing: Finishing,
    private readonly keepaliveMs: number,
  ) {}

  async respond(ctx: ChatContext<Ingress>, input: CascadeInput, extraHeaders: Record<string, string>, res: ServerResponse): Promise<void> {
    const sse = new SseResponse(res, this.keepaliveMs);
    sse.open(extraHeaders);
    const exclude = ctx.request.reasoning?.exclude === true;
    const out = ctx.ingress.stream(ctx, sse);
    let chars = 0;
    const toolCalls = new StreamedToolCalls();
    const sink: StreamSink = {
      nativeFamily: out.nativeFamily,
      native: out.native?.bind(out),
      commit: (served: Served) => out.commit(served.candidate),
      chunk: (choices: ChunkChoice[]) => {
        for (const c of choices) {
          const d = c.delta;
          if (exclude) {
            delete d.reasoning;
            delete d.reasoning_details;
          }
          chars += (d.content?.length ?? 0) + (d.reasoning?.length ?? 0);
          if (d.tool_calls) {
            for (const t of d.tool_calls) chars += t.function?.arguments?.length ?? 0;
            toolCalls.add(c.index, d.tool_calls);
          }
        }
        out.chunk(choices);
      },
    };
    try {
      await this.streamThrough(ctx, input, out, sink, () => chars, toolCalls);
    } finally {
      // Whatever happened above, the keepalive timer must not outlive the request.
      sse.stop();
    }
  }

  private async streamThrough(
    ctx: ChatContext,
    input: CascadeInput,
    out: IngressStream,
    sink: StreamSink,
    streamedChars: () => number,
    toolCalls: StreamedToolCalls,
  ): Promise<void> {
    let result: StreamResult;
    try {
      result = await this.upstream.stream(input, sink);
    } catch (err) {
      const error = this.finishing.crashed(ctx, err);
      out.fail({ error, candidate: null, usage: null, meta: requestMetadata(ctx, null, null) });
      out.close();
      return;
    }
    const interrupted = interruptionOf(input.signal);
    const cancelled = interrupted === "cancelled";
    const shutdown = interrupted === "shutdown";
    const served = result.served;
    if (!served) {
      const { error, outcome } = this.finishing.unserved(ctx, result, interrupted);
      if (!cancelled) out.fail({ error, candidate: null, usage: null, meta: requestMetadata(ctx, result, outcome.routingOverheadMs) });
      out.close();
      return;
    }

    const failure = result.failure;
    const usage = streamUsage(result.usage, estimatedUsage(ctx.promptTokens, streamedChars()), interrupted !== null || failure !== null);
    const end = performance.now();
    const outcome = outcomeOf(ctx, {
      status: cancelled ? "cancelled" : failure || shutdown ? "error" : "complete",
      served: served.candidate,
      usage,
      finishReason: (failure && !cancelled) || shutdown ? "error" : result.finishReason,
      nativeFinishReason: result.nativeFinishReason,
      ttftMs: result.firstContentAt === null ? null : result.firstContentAt - ctx.t0,
      generationMs: result.firstContentAt === null ? null : end - result.firstContentAt,
      // A stream that broke after committing is recorded on its attempt, not on the request; one the
      // gateway cut as it stopped is recorded with that reason (it is not the provider's failure).
      errorCode: shutdown ? GATEWAY_SHUTDOWN.code : null,
      errorMessage: shutdown ? GATEWAY_SHUTDOWN.message : null,
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
      toolCalls: toolCalls.count(),
    });
    // The stream ends once the record is on the bus: the ledger settles the spend from it.
    await this.finishing.finish(ctx, outcome, served);
    if (cancelled) return;
    const meta = requestMetadata(ctx, result, outcome.routingOverheadMs);
    if (failure || shutdown) {
      const error = shutdown ? GATEWAY_SHUTDOWN : new DomainError("upstream_error", failure?.clientMessage ?? "", { status: 502 });
      out.fail({ error, candidate: served.candidate, usage, meta });
    } else {
      await out.end({ candidate: served.candidate, usage, finishReason: result.finishReason, nativeFinishReason: result.nativeFinishReason, meta });
    }
    out.close();
  }
}
