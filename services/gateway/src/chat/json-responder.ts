import { countToolCalls } from "./tool-call-check";
import type { ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { writeJson } from "@router/http-kit";
import type { UpstreamDispatcher } from "../dispatch/upstream-dispatcher";
import type { CascadeInput, CompletionResult } from "../dispatch/types";
import type { Ingress } from "../ingress/ingress";
import { droppedToolsHeader } from "./builtin-tools";
import { maxTokensHeader } from "./max-tokens-header";
import type { ChatContext } from "./chat-context";
import { sendChatError, sendUnserved } from "./error-response";
import type { Finishing } from "./finishing";
import { outcomeOf } from "./request-outcome";
import { requestMetadata } from "./router-metadata";
import { completionChars, estimatedUsage } from "../spend/usage-cost";

/** Answers a non-stream request once a provider answered whole, in the ingress's format. */
export class JsonResponder {
  constructor(
    private readonly upstream: UpstreamDispatcher,
    private readonly finishing: Finishing,
  ) {}

  async respond(ctx: ChatContext<Ingress>, input: CascadeInput, extraHeaders: Record<string, string>, res: ServerResponse): Promise<void> {
    let result: CompletionResult;
    try {
      result = await this.upstream.complete(input);
    } catch (err) {
      sendChatError(res, this.finishing.crashed(ctx, err), ctx, null, null);
      return;
    }
    const served = result.served;
    const completion = result.completion;
    if (!served || !completion) {
      sendUnserved(res, this.finishing, ctx, result, input.signal);
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
    const outcome = outcomeOf(ctx, {
      status: "complete",
      served: served.candidate,
      usage,
      finishReason: first?.finish_reason ?? null,
      nativeFinishReason: first?.native_finish_reason ?? null,
      ttftMs: elapsed,
      generationMs: result.attempts[result.attempts.length - 1]?.durationMs ?? null,
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
      toolCalls: countToolCalls(completion.choices),
    });
    const meta = ctx.headers.metadata ? requestMetadata(ctx, result, outcome.routingOverheadMs) : null;
    const body = ctx.ingress.render(ctx, { candidate: served.candidate, completion, usage, meta });
    // Written once the record is on the bus (the ledger settles the spend from it), and a stored
    // answer once it is kept, so the client's next request can name its id; the two go together.
    await Promise.all([this.finishing.finish(ctx, outcome, served), ctx.ingress.keep?.(ctx, body)]);
    writeJson(res, 200, body, { ...extraHeaders, ...droppedToolsHeader(outcome.droppedTools), ...maxTokensHeader(ctx.request, served.candidate) });
  }
}
