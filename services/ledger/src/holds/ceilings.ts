import { windowAt, type Nanodollars, type WindowKind } from "@router/money";

/**
 * A limit that counts a request: a key ceiling the gateway sends with each call (it owns key
 * settings), or a workspace or agent budget the ledger keeps itself (src/budgets).
 */
export interface CeilingRule {
  /** "key", "workspace", "agent", "run": also the refusal's scope. */
  subjectKind: string;
  /** Names the counter row: a key hash, a workspace id, an agent within its scope. */
  subjectId: string;
  limit: Nanodollars;
  window: WindowKind;
  hard: boolean;
  /** Whether BYOK spend counts toward this ceiling. */
  includeByok: boolean;
  /** For people (a key's name, an agent's name), carried into threshold events; may be empty. */
  subjectName?: string;
  /** An agent budget scoped to one workspace: that workspace; otherwise unset. */
  workspaceId?: string;
}

/** A ceiling placed in the calendar window that contains a given moment: one counter row. */
export interface WindowedCeiling extends CeilingRule {
  windowStart: Date;
  /** Exclusive; null for lifetime. */
  windowEnd: Date | null;
}

/** A ceiling that excludes BYOK spend neither reserves for nor refuses a BYOK request. */
export function countsRequest(ceiling: CeilingRule, isByok: boolean): boolean {
  return !isByok || ceiling.includeByok;
}

export function inWindowAt(ceiling: CeilingRule, now: Date): WindowedCeiling {
  const span = windowAt(ceiling.window, now);
  // Field by field, not a spread: the rules come in several shapes (a key's, a workspace's, an
  // agent's), and spreading them cost about 3 µs a ceiling against 0.1 µs, four ceilings a turn.
  return {
    subjectKind: ceiling.subjectKind,
    subjectId: ceiling.subjectId,
    limit: ceiling.limit,
    window: ceiling.window,
    hard: ceiling.hard,
    includeByok: ceiling.includeByok,
    subjectName: ceiling.subjectName,
    workspaceId: ceiling.workspaceId,
    windowStart: span.start,
    windowEnd: span.end,
  };
}

/** Identifies a counter row within one call, where every ceiling shares the same moment. */
export function counterKey(c: { subjectKind: string; subjectId: string; window: WindowKind }): string {
  return `${c.subjectKind}\u0000${c.subjectId}\u0000${c.window}`;
}

/**
 * The order in which counter rows are locked. Every transaction that touches several rows takes
 * them in this order, so two transactions never wait on each other in a cycle.
 */
export function lockOrder(
  a: { subjectKind: string; subjectId: string; window: WindowKind; windowStart: Date },
  b: { subjectKind: string; subjectId: string; window: WindowKind; windowStart: Date },
): number {
  const pairs: Array<[string | number, string | number]> = [
    [a.subjectKind, b.subjectKind],
    [a.subjectId, b.subjectId],
    [a.window, b.window],
    [a.windowStart.getTime(), b.windowStart.getTime()],
  ];
  for (const [x, y] of pairs) if (x !== y) return x < y ? -1 : 1;
  return 0;
}

/**
 * One ceiling per counter row: when a call names the same subject and window twice, the stricter
 * one (hard before soft, then the lower limit) applies, since one row can be reserved only once.
 */
export function strictestPerCounter<C extends CeilingRule>(ceilings: C[]): C[] {
  const byKey = new Map<string, C>();
  for (const c of ceilings) {
    const key = counterKey(c);
    const seen = byKey.get(key);
    if (!seen || stricter(c, seen)) byKey.set(key, c);
  }
  return [...byKey.values()];
}

function stricter(a: CeilingRule, b: CeilingRule): boolean {
  if (a.hard !== b.hard) return a.hard;
  return a.limit < b.limit;
}
