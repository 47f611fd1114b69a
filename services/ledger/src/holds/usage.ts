import type { Clock, Nanodollars } from "@router/money";
import { counterKey, inWindowAt, type CeilingRule } from "./ceilings";
import type { HoldStore } from "./store";

export interface CeilingUsage {
  subjectKind: string;
  subjectId: string;
  /**
   * Settled spend in the current window plus the worst case of every request in flight. A spend
   * lease's unspent headroom is not usage: a lease counts the requests its gateway reported running
   * and the spends on their way (Admit still measures the whole lease).
   */
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
  const counting = windowed.filter((c) => c.includeByok);
  const [totals, headroom] = await Promise.all([deps.store.totals(counting), deps.store.leaseHeadroom(counting)]);
  return windowed.map((c) => {
    const t = c.includeByok ? totals.get(counterKey(c)) : undefined;
    const used = t ? t.settled + t.reserved - (headroom.get(counterKey(c)) ?? 0n) : 0n;
    return {
      subjectKind: c.subjectKind,
      subjectId: c.subjectId,
      used: used > 0n ? used : 0n,
      windowEnd: c.windowEnd,
    };
  });
}
