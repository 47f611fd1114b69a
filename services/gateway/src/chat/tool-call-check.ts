import type { CompletionChoice, ToolCallDelta } from "@router/providers";

/** Tool calls a provider returned, and how many of them carry arguments that are not a JSON object. */
export interface ToolCallCount {
  total: number;
  invalid: number;
}

export const NO_TOOL_CALLS: ToolCallCount = { total: 0, invalid: 0 };

/** A tool call's arguments are usable when they parse as a JSON object (what every tool expects). */
function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** The tool calls of a whole completion. */
export function countToolCalls(choices: readonly CompletionChoice[]): ToolCallCount {
  let total = 0;
  let invalid = 0;
  for (const c of choices) {
    for (const t of c.message.tool_calls ?? []) {
      total += 1;
      if (!isJsonObject(t.function.arguments)) invalid += 1;
    }
  }
  return total === 0 ? NO_TOOL_CALLS : { total, invalid };
}

/**
 * The tool calls of a stream, whose arguments arrive in pieces: joined per choice and tool index,
 * judged at the end. Holds nothing until a tool call arrives.
 */
export class StreamedToolCalls {
  private readonly args = new Map<string, string>();

  add(choiceIndex: number, deltas: readonly ToolCallDelta[]): void {
    for (const d of deltas) {
      const key = `${choiceIndex}/${d.index}`;
      this.args.set(key, (this.args.get(key) ?? "") + (d.function?.arguments ?? ""));
    }
  }

  count(): ToolCallCount {
    if (this.args.size === 0) return NO_TOOL_CALLS;
    let invalid = 0;
    for (const text of this.args.values()) if (!isJsonObject(text)) invalid += 1;
    return { total: this.args.size, invalid };
  }
}
