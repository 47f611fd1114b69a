import type { ChatContext } from "../../chat/chat-context";
import { parseChatRequest } from "@router/chat-request";
import type { SseResponse } from "../sse-response";
import type { Candidate } from "../../dispatch/types";
import type { ChunkChoice } from "@router/providers";
import type { Ingress, IngressStream, ServedAnswer, StreamEnd, StreamFailure } from "../ingress";
import { chunkPrefix, errorChunk, usageBody } from "./shapes";

export const CHAT_COMPLETIONS_PATH = "/v1/chat/completions";

/**
 * `POST /v1/chat/completions`: the OpenAI chat format is the internal request already, so parsing
 * is validation and rendering adds the router's envelope (`id`, `model`, `provider`, `usage`).
 */
export const chatCompletionsIngress: Ingress = {
  kind: "chat",
  name: "chat_completions",
  path: CHAT_COMPLETIONS_PATH,
  parse: (body) => ({ request: parseChatRequest(body), echo: null, native: { family: "openai", body: body as Record<string, unknown> } }),
  render(ctx: ChatContext, a: ServedAnswer): Record<string, unknown> {
    const body: Record<string, unknown> = {
      id: ctx.id,
      object: "chat.completion",
      created: ctx.created,
      model: a.candidate.modelId,
      provider: a.candidate.providerSlug,
      choices: a.completion.choices.map((c) => ({
        index: c.index,
        message: c.message,
        logprobs: null,
        finish_reason: c.finish_reason,
        native_finish_reason: c.native_finish_reason,
      })),
      usage: usageBody(a.usage),
    };
    if (a.meta) body.router_metadata = a.meta;
    return body;
  },
  stream: (ctx, sse) => new ChatChunks(ctx, sse),
  errorBody: (error) => ({ error }),
};

/** `chat.completion.chunk` events, then a usage chunk (or one error chunk) and `[DONE]`. */
class ChatChunks implements IngressStream {
  private prefix = "";

  constructor(
    private readonly ctx: ChatContext,
    private readonly sse: SseResponse,
  ) {}

  commit(c: Candidate): void {
    // Only the choices are serialised per chunk; the envelope is fixed once the stream commits.
    this.prefix = chunkPrefix(this.ctx, c);
  }

  chunk(choices: ChunkChoice[]): void {
    this.sse.data(`${this.prefix}${JSON.stringify(choices)}}`);
  }

  end(e: StreamEnd): void {
    const last: Record<string, unknown> = {
      id: this.ctx.id,
      object: "chat.completion.chunk",
      created: this.ctx.created,
      model: e.candidate.modelId,
      provider: e.candidate.providerSlug,
      choices: [],
      usage: usageBody(e.usage),
    };
    if (e.meta) last.router_metadata = e.meta;
    this.sse.data(JSON.stringify(last));
  }

  fail(f: StreamFailure): void {
    const model = f.candidate?.modelId ?? this.ctx.request.model ?? "";
    this.sse.data(JSON.stringify(errorChunk(this.ctx, model, f.candidate?.providerSlug ?? null, f.error, f.usage, f.meta)));
  }

  close(): void {
    this.sse.done();
  }
}
