import type { ChunkChoice, CompletionMessage } from "@router/providers";

/**
 * The answer as the ordered content blocks that the Responses and Anthropic Messages formats are
 * made of (reasoning, text, tool calls), from the internal OpenAI-shaped message or its stream of
 * deltas. Both ingresses render these blocks; neither reads chat deltas itself.
 */

export type OutputBlock =
  /**
   * Reasoning text; `signature` when the provider signed it (Anthropic thinking), and `format` the
   * `reasoning_details` format it came in, which says which provider can continue it.
   */
  | { kind: "reasoning"; text: string; signature: string | null; format: string | null }
  /** Reasoning the provider encrypted (Anthropic redacted thinking). */
  | { kind: "redacted"; data: string; format: string | null }
  | { kind: "text"; text: string }
  | { kind: "tool_call"; id: string; name: string; arguments: string };

/** The blocks of a whole answer: reasoning first, then text, then tool calls. */
export function blocksOf(message: CompletionMessage): OutputBlock[] {
  const blocks: OutputBlock[] = [];
  const details = (message.reasoning_details ?? [])
    .filter((d) => d.type === "reasoning.text" || d.type === "reasoning.encrypted")
    .sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  if (details.length) {
    for (const d of details) {
      const format = d.format ?? null;
      if (d.type === "reasoning.text") blocks.push({ kind: "reasoning", text: d.text, signature: d.signature ?? null, format });
      else if (d.type === "reasoning.encrypted") blocks.push({ kind: "redacted", data: d.data, format });
    }
  } else if (message.reasoning) {
    blocks.push({ kind: "reasoning", text: message.reasoning, signature: null, format: null });
  }
  if (message.content) blocks.push({ kind: "text", text: message.content });
  for (const t of message.tool_calls ?? []) {
    blocks.push({ kind: "tool_call", id: t.id, name: t.function.name, arguments: t.function.arguments });
  }
  return blocks;
}

/** A block as it opens in a stream: its kind and what is known before its first delta. */
export type OpenedBlock =
  | { kind: "reasoning" }
  | { kind: "redacted"; data: string; format: string | null }
  | { kind: "text" }
  | { kind: "tool_call"; id: string; name: string };

/** What a stream renderer does with the blocks as they open, grow and close. */
export interface BlockSink {
  open(index: number, block: OpenedBlock): void;
  /** More text (reasoning, text) or more JSON of a tool call's arguments. */
  delta(index: number, kind: "reasoning" | "text" | "tool_call", text: string): void;
  /** The signature of the open reasoning block, and the format of its `reasoning_details`. */
  signature(index: number, signature: string, format: string | null): void;
  close(index: number): void;
}

/**
 * Turns chat stream deltas into block events: a block opens when a delta of another kind (or
 * another tool call) arrives and closes when the next opens or the stream ends. Only choice 0 is
 * read (every ingress asks for one choice).
 */
export class StreamBlocks {
  private open: { index: number; kind: OpenedBlock["kind"]; toolIndex: number } | null = null;
  private next = 0;

  constructor(private readonly sink: BlockSink) {}

  /** How many blocks have opened so far. */
  get count(): number {
    return this.next;
  }

  feed(choices: ChunkChoice[]): void {
    const d = choices[0]?.delta;
    if (!d) return;
    if (d.reasoning) this.sink.delta(this.ensure({ kind: "reasoning" }), "reasoning", d.reasoning);
    for (const r of d.reasoning_details ?? []) {
      if (r.type === "reasoning.text" && r.signature) this.sink.signature(this.ensure({ kind: "reasoning" }), r.signature, r.format ?? null);
      else if (r.type === "reasoning.encrypted") {
        this.start({ kind: "redacted", data: r.data, format: r.format ?? null });
        this.finish();
      }
    }
    if (d.content) this.sink.delta(this.ensure({ kind: "text" }), "text", d.content);
    for (const t of d.tool_calls ?? []) {
      let index: number;
      if (this.open?.kind === "tool_call" && this.open.toolIndex === t.index) index = this.open.index;
      else index = this.start({ kind: "tool_call", id: t.id ?? "", name: t.function?.name ?? "" }, t.index);
      if (t.function?.arguments) this.sink.delta(index, "tool_call", t.function.arguments);
    }
  }

  /** Closes the open block, if any (the stream ended). */
  finish(): void {
    if (!this.open) return;
    const { index } = this.open;
    this.open = null;
    this.sink.close(index);
  }

  private ensure(block: { kind: "reasoning" } | { kind: "text" }): number {
    return this.open?.kind === block.kind ? this.open.index : this.start(block);
  }

  private start(block: OpenedBlock, toolIndex = -1): number {
    this.finish();
    const index = this.next++;
    this.open = { index, kind: block.kind, toolIndex };
    this.sink.open(index, block);
    return index;
  }
}
