import type { ChatContext } from "../../chat/chat-context";
import type { SseResponse } from "../sse-response";
import { promptParts } from "../../spend/usage-cost";
import type { Candidate } from "../../dispatch/types";
import type { ChunkChoice, FinishReason, TokenUsage } from "@router/providers";
import type { Ingress, IngressStream, ServedAnswer, StreamEnd, StreamFailure } from "../ingress";
import { openAiError } from "../openai-error";
import { blocksOf, StreamBlocks, type OpenedBlock, type OutputBlock } from "@router/inference-api";
import { encryptedContentOf } from "@router/inference-api";
import { withStoredInput, type ResponsesStorage } from "./stored-input";
import { parseResponsesRequest } from "@router/inference-api";
import { customToolInput } from "@router/inference-api";

export const RESPONSES_PATH = "/v1/responses";

export function responsesUsage(u: TokenUsage): Record<string, unknown> {
  return {
    input_tokens: u.prompt,
    input_tokens_details: { cached_tokens: promptParts(u).cacheRead },
    output_tokens: u.completion,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.prompt + u.completion,
  };
}

/** `completed`, or `incomplete` with its reason when the answer was cut by the token bound or a filter. */
function statusOf(finish: FinishReason | null): { status: string; incomplete_details: { reason: string } | null } {
  if (finish === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (finish === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/** Output item ids: the generation id's hex with the item's position, so they are unique and traceable. */
const itemId = (ctx: ChatContext, prefix: string, index: number): string => `${prefix}_${ctx.id.slice(4)}_${index}`;

/**
 * One output item. A reasoning item has its text as `reasoning_text` content and, when a provider
 * can continue it (signed or redacted thinking), `encrypted_content` to echo back (encrypted-reasoning.ts).
 */
function outputItem(ctx: ChatContext, b: OutputBlock, index: number): Record<string, unknown> {
  switch (b.kind) {
    case "reasoning": {
      const encrypted = encryptedContentOf(b);
      return {
        type: "reasoning",
        id: itemId(ctx, "rs", index),
        summary: [],
        content: [{ type: "reasoning_text", text: b.text }],
        ...(encrypted ? { encrypted_content: encrypted } : {}),
      };
    }
    case "redacted":
      return { type: "reasoning", id: itemId(ctx, "rs", index), summary: [], encrypted_content: encryptedContentOf(b) };
    case "text":
      return {
        type: "message",
        id: itemId(ctx, "msg", index),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: b.text, annotations: [], logprobs: [] }],
      };
    case "tool_call":
      return toolCallItem(ctx, b, index);
  }
}

/**
 * A tool call under the name the client gave the tool (tools.ts): a function of a namespace group
 * with its `namespace`, a custom tool's call as `custom_tool_call` with its freeform `input`.
 */
function toolCallItem(ctx: ChatContext, b: Extract<OutputBlock, { kind: "tool_call" }>, index: number): Record<string, unknown> {
  const client = ctx.toolNames.get(b.name);
  if (client?.kind === "custom") {
    return { type: "custom_tool_call", id: itemId(ctx, "ctc", index), call_id: b.id, name: client.name, input: customToolInput(b.arguments), status: "completed" };
  }
  const name = client ? { name: client.name, namespace: client.namespace } : { name: b.name };
  return { type: "function_call", id: itemId(ctx, "fc", index), call_id: b.id, ...name, arguments: b.arguments, status: "completed" };
}

/** The `response` object: the answer (or its state so far) with the request's settings echoed. */
function responseObject(ctx: ChatContext, c: Candidate | null, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: ctx.id,
    object: "response",
    created_at: ctx.created,
    model: c?.modelId ?? ctx.request.model ?? "",
    ...(c ? { provider: c.providerSlug } : {}),
    ...ctx.echo,
    error: null,
    incomplete_details: null,
    output: [],
    usage: null,
    ...fields,
  };
}

/**
 * `POST /v1/responses`: OpenAI Responses in and out, served by any provider; nothing kept (the
 * gateway serves `storingResponsesIngress`, which keeps answers; docs/ingress.md).
 * The response id is the generation id, so `GET /v1/generation?id=` finds it.
 */
export const responsesIngress: Ingress = {
  kind: "chat",
  name: "responses",
  path: RESPONSES_PATH,
  parse: parseResponsesRequest,
  render(ctx: ChatContext, a: ServedAnswer): Record<string, unknown> {
    const choice = a.completion.choices[0];
    const body = responseObject(ctx, a.candidate, {
      ...statusOf(choice?.finish_reason ?? null),
      output: choice ? blocksOf(choice.message).map((b, i) => outputItem(ctx, b, i)) : [],
      usage: responsesUsage(a.usage),
    });
    if (a.meta) body.router_metadata = a.meta;
    return body;
  },
  stream: (ctx, sse) => new ResponseEvents(ctx, sse, null),
  errorBody: openAiError,
};

/**
 * `POST /v1/responses` with stored responses (stored-input.ts): `previous_response_id` and
 * `item_reference` items expanded from the organisation's stored responses before parsing, and an
 * answer whose `store` is true written before its last bytes (a whole body before it is sent; a
 * stream before `response.completed`), so the id the client holds is readable by its next request.
 * Nothing is read or written for `store: false`.
 */
export function storingResponsesIngress(storage: ResponsesStorage): Ingress {
  const keep = (ctx: ChatContext, body: Record<string, unknown>) => keepResponse(storage, ctx, body);
  return {
    ...responsesIngress,
    expand: (body, caller) => withStoredInput(body, caller, storage),
    keep,
    stream: (ctx, sse) => new ResponseEvents(ctx, sse, keep),
  };
}

/**
 * Writes a finished answer whose `store` is true. A write that fails is logged and the answer says
 * `store: false`: it was served (and billed), and the client must not count on its id.
 */
async function keepResponse(storage: ResponsesStorage, ctx: ChatContext, body: Record<string, unknown>): Promise<void> {
  if (body.store !== true) return;
  const { router_metadata: _meta, ...response } = body;
  try {
    await storage.responses.put(ctx.caller.orgId, ctx.id, { response, input: ctx.storedInput });
  } catch (err) {
    storage.log.error({ err, id: ctx.id }, "gateway.stored_responses.write_failed");
    body.store = false;
  }
}

/** One output item as it streams: its block, the text or arguments so far, and a reasoning block's signature and format. */
interface OpenItem {
  block: OpenedBlock;
  text: string;
  signature: string | null;
  format: string | null;
}

/**
 * The Responses event stream: response.created and response.in_progress at commit, then per output
 * item output_item.added, content_part.added, the deltas, their .done events and output_item.done,
 * then response.completed (or response.incomplete) with usage; response.failed when it fails.
 * Every event carries `sequence_number`.
 */
class ResponseEvents implements IngressStream {
  private readonly blocks: StreamBlocks;
  private readonly items = new Map<number, OpenItem>();
  private readonly done: Record<string, unknown>[] = [];
  private candidate: Candidate | null = null;
  private seq = 0;

  constructor(
    private readonly ctx: ChatContext,
    private readonly sse: SseResponse,
    private readonly keep: ((ctx: ChatContext, response: Record<string, unknown>) => Promise<void>) | null,
  ) {
    this.blocks = new StreamBlocks({
      open: (index, block) => this.openItem(index, block),
      delta: (index, kind, text) => this.delta(index, kind, text),
      signature: (index, signature, format) => {
        const item = this.items.get(index);
        if (item) Object.assign(item, { signature, format });
      },
      close: (index) => this.closeItem(index),
    });
  }

  commit(c: Candidate): void {
    this.candidate = c;
    this.created();
  }

  chunk(choices: ChunkChoice[]): void {
    this.blocks.feed(choices);
  }

  async end(e: StreamEnd): Promise<void> {
    this.blocks.finish();
    const state = statusOf(e.finishReason);
    const response = responseObject(this.ctx, e.candidate, { ...state, output: this.done, usage: responsesUsage(e.usage) });
    if (e.meta) response.router_metadata = e.meta;
    if (this.keep) await this.keep(this.ctx, response);
    this.send(state.status === "completed" ? "response.completed" : "response.incomplete", { response });
  }

  fail(f: StreamFailure): void {
    if (!this.candidate) this.created();
    else this.blocks.finish();
    const response = responseObject(this.ctx, f.candidate, {
      status: "failed",
      error: { code: f.error.code, message: f.error.message },
      output: this.done,
      usage: f.usage ? responsesUsage(f.usage) : null,
    });
    if (f.meta) response.router_metadata = f.meta;
    this.send("response.failed", { response });
  }

  close(): void {
    this.sse.end();
  }

  private created(): void {
    const response = responseObject(this.ctx, this.candidate, { status: "in_progress" });
    this.send("response.created", { response });
    this.send("response.in_progress", { response });
  }

  private openItem(index: number, block: OpenedBlock): void {
    const open: OpenItem = { block, text: "", signature: null, format: null };
    this.items.set(index, open);
    const item = this.itemOf(index, open, "in_progress");
    this.send("response.output_item.added", { output_index: index, item });
    const part = partOf(block, "");
    if (part) this.send("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part });
    if (block.kind === "redacted") this.blocks.finish();
  }

  private delta(index: number, kind: "reasoning" | "text" | "tool_call", delta: string): void {
    const item = this.items.get(index);
    if (!item) return;
    item.text += delta;
    const id = this.itemOf(index, item, "in_progress").id;
    if (kind === "text") this.send("response.output_text.delta", { item_id: id, output_index: index, content_index: 0, delta, logprobs: [] });
    else if (kind === "reasoning") this.send("response.reasoning_text.delta", { item_id: id, output_index: index, content_index: 0, delta });
    // A custom tool's input is a string inside the JSON arguments: it is sent whole when the call closes.
    else if (!this.isCustomCall(item.block)) this.send("response.function_call_arguments.delta", { item_id: id, output_index: index, delta });
  }

  private closeItem(index: number): void {
    const open = this.items.get(index);
    if (!open) return;
    this.items.delete(index);
    const { block, text } = open;
    // The whole item, with a signed reasoning block's encrypted_content now that its signature is in.
    const item = this.itemOf(index, open, "completed");
    const at = { item_id: item.id, output_index: index };
    if (block.kind === "text") this.send("response.output_text.done", { ...at, content_index: 0, text, logprobs: [] });
    else if (block.kind === "reasoning") this.send("response.reasoning_text.done", { ...at, content_index: 0, text });
    else if (block.kind === "tool_call" && item.type === "custom_tool_call") {
      this.send("response.custom_tool_call_input.delta", { ...at, delta: item.input });
      this.send("response.custom_tool_call_input.done", { ...at, input: item.input });
    } else if (block.kind === "tool_call") this.send("response.function_call_arguments.done", { ...at, name: item.name, arguments: text });
    const part = partOf(block, text);
    if (part) this.send("response.content_part.done", { ...at, content_index: 0, part });
    this.send("response.output_item.done", { output_index: index, item });
    this.done.push(item);
  }

  private isCustomCall(block: OpenedBlock): boolean {
    return block.kind === "tool_call" && this.ctx.toolNames.get(block.name)?.kind === "custom";
  }

  private itemOf(index: number, open: OpenItem, status: string): Record<string, unknown> & { id: string } {
    const { block, text } = open;
    const whole: OutputBlock =
      block.kind === "tool_call"
        ? { ...block, arguments: text }
        : block.kind === "redacted"
          ? block
          : block.kind === "text"
            ? { kind: "text", text }
            : { kind: "reasoning", text, signature: open.signature, format: open.format };
    const item = outputItem(this.ctx, whole, index) as Record<string, unknown> & { id: string };
    if (block.kind === "reasoning" && status === "in_progress") item.content = [];
    if (block.kind === "text") item.content = status === "in_progress" ? [] : item.content;
    if ("status" in item) item.status = status;
    return item;
  }

  private send(type: string, fields: Record<string, unknown>): void {
    this.sse.event(type, JSON.stringify({ type, sequence_number: this.seq++, ...fields }));
  }
}

/** The content part a block streams into: output text for a message, reasoning text for reasoning. */
function partOf(block: OpenedBlock, text: string): Record<string, unknown> | null {
  if (block.kind === "text") return { type: "output_text", text, annotations: [], logprobs: [] };
  if (block.kind === "reasoning") return { type: "reasoning_text", text };
  return null;
}
