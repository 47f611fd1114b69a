import RE2 from "re2";
import { builtinDetector, isBuiltinDetector, type Detector } from "./builtin-detectors";

export type FilterAction = "block" | "redact" | "flag";

/** An organisation's own pattern, as a guardrail stores it. */
export interface FilterRule {
  name?: string;
  pattern: string;
  action: FilterAction;
}

/** One guardrail's content filters; its allowlist covers its own detectors only. */
export interface FilterSetDefinition {
  builtins: readonly string[];
  rules: readonly FilterRule[];
  allowlist: readonly string[];
}

/** Label of a custom rule that has no name. */
const CUSTOM_LABEL = "custom";

/**
 * Why an organisation's pattern cannot be used, or null. Patterns run through RE2, which matches in
 * time linear in the text: one organisation's pattern can never stall a gateway shared by many. RE2
 * refuses what it cannot guarantee (lookaround, backreferences), so that is a write-time 400.
 */
export function patternProblem(pattern: string): string | null {
  try {
    new RE2(pattern, "u");
    return null;
  } catch (err) {
    return `is not a pattern RE2 accepts (${(err as Error).message}); lookaround and backreferences are not supported`;
  }
}

interface ActingDetector extends Detector {
  action: FilterAction;
}

interface Span {
  start: number;
  end: number;
  label: string;
  action: FilterAction;
}

/**
 * One guardrail's detectors, compiled once. Builtin detectors block: they exist to keep personal
 * data and secrets from leaving, and refusing tells the caller which label to remove.
 */
export class FilterSet {
  private constructor(
    private readonly builtins: readonly ActingDetector[],
    private readonly rules: readonly ActingDetector[],
    /** All the rules in one automaton: one pass says which rules match at all (usually none). */
    private readonly ruleSet: InstanceType<typeof RE2.Set> | null,
    private readonly allowlist: readonly string[],
  ) {}

  static compile(def: FilterSetDefinition): FilterSet {
    const builtins: ActingDetector[] = [];
    for (const name of new Set(def.builtins)) {
      if (isBuiltinDetector(name)) builtins.push({ ...builtinDetector(name), action: "block" });
    }
    // Written patterns were checked with patternProblem; one that fails now is skipped, not fatal.
    const usable = def.rules.filter((rule) => patternProblem(rule.pattern) === null);
    const rules = usable.map((rule) => ({ label: rule.name || CUSTOM_LABEL, pattern: new RE2(rule.pattern, "gu"), action: rule.action }));
    const ruleSet = usable.length > 0 ? new RE2.Set(usable.map((rule) => rule.pattern), "u") : null;
    const allowlist = [...new Set(def.allowlist.map((p) => p.toLowerCase()).filter((p) => p.length > 0))];
    return new FilterSet(builtins, rules, ruleSet, allowlist);
  }

  /** Every match in `text` that no allowlisted phrase covers. */
  spans(text: string): Span[] {
    const found: Span[] = [];
    const allowed = new AllowedRanges(text, this.allowlist);
    for (const d of this.builtins) {
      if (d.requires === undefined || text.includes(d.requires)) scan(d, text, allowed, found);
    }
    if (this.ruleSet !== null) {
      for (const i of this.ruleSet.match(text)) scan(this.rules[i]!, text, allowed, found);
    }
    return found;
  }
}

function scan(d: ActingDetector, text: string, allowed: AllowedRanges, found: Span[]): void {
  d.pattern.lastIndex = 0;
  for (let m = d.pattern.exec(text); m !== null; m = d.pattern.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    if (end === start) {
      d.pattern.lastIndex = start + 1;
      continue;
    }
    if (d.confirms && !d.confirms(m[0])) continue;
    if (allowed.covers(start, end)) continue;
    found.push({ start, end, label: d.label, action: d.action });
  }
}

/** Where a text's allowlisted phrases occur (case-insensitive); found on the first match only. */
class AllowedRanges {
  private ranges: Array<[number, number]> | undefined;

  constructor(
    private readonly text: string,
    private readonly allowlist: readonly string[],
  ) {}

  covers(start: number, end: number): boolean {
    if (this.allowlist.length === 0) return false;
    this.ranges ??= this.find();
    return this.ranges.some(([a, b]) => a <= start && end <= b);
  }

  private find(): Array<[number, number]> {
    const lower = this.text.toLowerCase();
    const ranges: Array<[number, number]> = [];
    for (const phrase of this.allowlist) {
      for (let at = lower.indexOf(phrase); at !== -1; at = lower.indexOf(phrase, at + 1)) ranges.push([at, at + phrase.length]);
    }
    return ranges;
  }
}
/**
 * What the filters of one request found, across all its texts: the labels that matched, which of
 * them block, and the texts rewritten where a redacting detector matched. Matched text is never
 * kept: only labels leave this object.
 */
export class ContentVerdict {
  readonly labels = new Set<string>();
  readonly blocking = new Set<string>();
  readonly flagged = new Set<string>();
  readonly redacted = new Set<string>();

  constructor(private readonly sets: readonly FilterSet[]) {}

  get blocked(): boolean {
    return this.blocking.size > 0;
  }

  /** Scans one text; returns it with redacted spans replaced (the same string when none). */
  filter(text: string): string {
    const redact: Span[] = [];
    for (const set of this.sets) {
      for (const span of set.spans(text)) {
        this.labels.add(span.label);
        if (span.action === "block") this.blocking.add(span.label);
        else if (span.action === "flag") this.flagged.add(span.label);
        else {
          this.redacted.add(span.label);
          redact.push(span);
        }
      }
    }
    return redact.length === 0 ? text : rewrite(text, redact);
  }

  /** Labels in a stable order, for responses and records. */
  sortedLabels(): string[] {
    return [...this.labels].sort();
  }
}

/** Replaces each span (overlapping ones merged) with `[REDACTED:<label>]`. */
function rewrite(text: string, spans: Span[]): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  for (const span of spans) {
    if (span.end <= at) continue;
    if (span.start >= at) {
      out += `${text.slice(at, span.start)}[REDACTED:${span.label}]`;
    }
    at = Math.max(at, span.end);
  }
  return out + text.slice(at);
}
