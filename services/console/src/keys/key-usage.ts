import { callUnary } from "@router/grpc-kit";
import { windowAt, type Clock } from "@router/money";
import type { ledger } from "@router/proto";
import { keyCeilings } from "@router/api-keys";
import type { StoredKey } from "./key-store";

export interface KeyUsage {
  /** Settled spend in the current window plus in-flight reservations, as the spend gate counts it. */
  usedNanos: bigint;
  /** End of the current window; null for lifetime or no ceiling. */
  resetsAt: Date | null;
}

const NOTHING_COUNTED: KeyUsage = { usedNanos: 0n, resetsAt: null };

/**
 * What each key's ceiling has counted, from one ledger `Usage` call with the same ceilings the
 * chat path admits against. A key with no ceiling counts nothing, so the ledger is not asked.
 */
export async function measureKeyUsage(
  client: ledger.LedgerServiceClient,
  keys: StoredKey[],
  opts: { deadlineMs: number; clock: Clock },
): Promise<Map<string, KeyUsage>> {
  const out = new Map<string, KeyUsage>(keys.map((k) => [k.hash, NOTHING_COUNTED]));
  const ceilings = keys.flatMap(keyCeilings);
  if (ceilings.length === 0) return out;
  const res = await callUnary(client, client.usage.bind(client), { ceilings }, { deadlineMs: opts.deadlineMs, service: "ledger" });
  const reported = new Map(res.usage.filter((u) => u.subjectKind === "key").map((u) => [u.subjectId, u]));
  const now = opts.clock.now();
  for (const key of keys) {
    if (key.limitNanos === null) continue;
    const u = reported.get(key.hash);
    out.set(key.hash, {
      usedNanos: u?.usedNanodollars ?? 0n,
      resetsAt:
        u?.windowEndsAtMs !== undefined ? new Date(Number(u.windowEndsAtMs)) : windowAt(key.limitReset ?? "lifetime", now).end,
    });
  }
  return out;
}
