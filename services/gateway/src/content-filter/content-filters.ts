import { ContentVerdict, FilterSet, type FilterAction } from "@router/content-filter";
import type { routing } from "@router/proto";
import { LRUCache } from "lru-cache";
import type { ChatMessage } from "@router/chat-request";
import { filterMessages } from "./message-filter";

/** What the content filters made of one request's messages. */
export interface FilteredContent {
  verdict: ContentVerdict;
  /** The messages to send upstream: redacted where a redacting detector matched. */
  messages: ChatMessage[];
}

/** Why a blocking filter refused: the chat route's 403 and the preview's refusal say the same. */
export interface ContentFilterRefusal {
  message: string;
  /** The blocking labels, sorted; never the matched text. */
  labels: string[];
}

/** The refusal of a request a filter blocked; null when none did (or no filter applied). */
export function contentFilterRefusal(filtered: FilteredContent | null): ContentFilterRefusal | null {
  if (!filtered?.verdict.blocked) return null;
  const labels = [...filtered.verdict.blocking].sort();
  return { message: `messages: refused by a content filter (${labels.join(", ")})`, labels };
}

/**
 * The content filters of the guardrails Plan says apply, run here over the messages so that the
 * messages never travel to routing. Guardrails never change once written, so each guardrail's set
 * is compiled once and kept by id.
 */
export class ContentFilters {
  private readonly compiled = new LRUCache<string, FilterSet>({ max: 10_000 });

  constructor(private readonly onMatch?: (action: FilterAction, label: string) => void) {}

  /** Null when no applied guardrail sets a content filter: the common case costs nothing. */
  apply(sets: readonly routing.ContentFilterSet[], messages: ChatMessage[]): FilteredContent | null {
    if (sets.length === 0) return null;
    const verdict = new ContentVerdict(sets.map((s) => this.compile(s)));
    const filtered = filterMessages(verdict, messages);
    if (this.onMatch) {
      for (const label of verdict.blocking) this.onMatch("block", label);
      for (const label of verdict.redacted) this.onMatch("redact", label);
      for (const label of verdict.flagged) this.onMatch("flag", label);
    }
    return { verdict, messages: filtered };
  }

  private compile(set: routing.ContentFilterSet): FilterSet {
    let compiled = this.compiled.get(set.guardrailId);
    if (!compiled) {
      compiled = FilterSet.compile({
        builtins: set.builtins,
        rules: set.rules.map((r) => ({ name: r.name || undefined, pattern: r.pattern, action: r.action as FilterAction })),
        allowlist: set.allowlist,
      });
      this.compiled.set(set.guardrailId, compiled);
    }
    return compiled;
  }
}
