import type { Clock, Nanodollars } from "@router/money";
import { counterKey, inWindowAt, type CeilingRule } from "./ceilings";
import type { HoldStore } from "./store";

export interface CeilingUsage {
  subjectKind: string;
  subjectId: string;
  /** Settled spend in the current window plus every open reservation, as Admit measures it. */
  used: Nanodollars;
  /** End of the current window; null for lifetime. */
  windowEnd: Date | null;
}

/**
 * Usage of each ceiling in its current window. A ceiling that excludes BYOK spend counts nothing
 * while all traffic is BYOK, so it reads zero whatever its counter row holds.
 */
export async function usageOf(
  ceilings: CeilingRule[],
  deps: { store: HoldStore; clock: Clock },
): Promise<CeilingUsage[]> {
  const now = deps.clock.now();
  const windowed = ceilings.map((c) => inWindowAt(c, now));
  const totals = await deps.store.totals(windowed.filter((c) => c.includeByok));
  return windowed.map((c) => {
    const t = c.includeByok ? totals.get(counterKey(c)) : undefined;
    return {
      subjectKind: c.subjectKind,
      subjectId: c.subjectId,
      used: t ? t.settled + t.reserved : 0n,
      windowEnd: c.windowEnd,
    };
  });
}
