import type { ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { writeJson } from "@router/http-kit";
import type { UpstreamDispatcher } from "../dispatch/upstream-dispatcher";
import type { CascadeInput, EmbeddingsResult } from "../dispatch/types";
import type { EmbeddingsIngress, ParsedEmbeddings } from "../ingress/ingress";
import { inputTexts } from "@router/inference-api";
import type { TokenUsage } from "@router/providers";
import type { ChatContext } from "./chat-context";
import { sendChatError, sendUnserved } from "./error-response";
import type { Finishing } from "./finishing";
import { outcomeOf } from "./request-outcome";
import { requestMetadata } from "./router-metadata";
import { estimatedUsage } from "../spend/usage-cost";

/**
 * Answers an embeddings request (always whole: embeddings have no stream) once a provider embedded
 * every input; the same finishing as a chat answer, with prompt tokens only.
 */
export class EmbeddingsResponder {
  constructor(
    private readonly upstream: UpstreamDispatcher,
    private readonly finishing: Finishing,
  ) {}

  async respond(
    ctx: ChatContext<EmbeddingsIngress>,
    options: ParsedEmbeddings["options"],
    input: CascadeInput,
    extraHeaders: Record<string, string>,
    res: ServerResponse,
  ): Promise<void> {
    // The messages as admission left them: a redacting content filter rewrote them.
    const texts = inputTexts(ctx.request);
    let result: EmbeddingsResult;
    try {
      result = await this.upstream.embed(input, { ...options, input: texts });
    } catch (err) {
      sendChatError(res, this.finishing.crashed(ctx, err), ctx, null, null);
      return;
    }
    const { served, embeddings } = result;
    if (!served || !embeddings) {
      sendUnserved(res, this.finishing, ctx, result, input.signal);
      return;
    }
    const usage: TokenUsage =
      embeddings.promptTokens === null
        ? estimatedUsage(texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0), 0)
        : { prompt: embeddings.promptTokens, completion: 0, cached: 0, reasoning: 0 };
    const elapsed = performance.now() - ctx.t0;
    const outcome = outcomeOf(ctx, {
      status: "complete",
      served: served.candidate,
      usage,
      ttftMs: elapsed,
      generationMs: result.attempts[result.attempts.length - 1]?.durationMs ?? null,
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
    });
    // Written once the record is on the bus: the ledger settles the spend from it.
    await this.finishing.finish(ctx, outcome, served);
    const meta = ctx.headers.metadata ? requestMetadata(ctx, result, outcome.routingOverheadMs) : null;
    const body = ctx.ingress.render(ctx, { candidate: served.candidate, embeddings, usage, encodingFormat: options.encodingFormat, meta });
    writeJson(res, 200, body, extraHeaders);
  }
}
