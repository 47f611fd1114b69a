import { gatewayClient } from "@router/testkit";

/** What activity recorded and the ledger charged for one organisation's key, next to what was served. */
export interface Account {
  /** Served ids found in activity exactly once. */
  recorded: number;
  /** Served ids activity does not have. */
  missing: string[];
  /** Ids activity has more than once. */
  duplicated: string[];
  /** Every activity row of the organisation, served or not (failed, cut, lost with a gateway). */
  rows: number;
  /** The rows of requests that were not served and still carry a cost, to explain a difference. */
  chargedUnserved: ExportedRow[];
  /** How many served rows have each status, error code and list cost (USD), to explain a difference. */
  servedCosts: Record<string, number>;
  /** The sum of the rows' list cost (what a BYOK key's usage counts), in nanodollars. */
  recordedNanos: bigint;
  /** The ledger's usage of the key, in nanodollars. */
  usageNanos: bigint;
  /** Every served id recorded once and the usage equal to the recorded cost. */
  holds: boolean;
  /** When the invariants first held (epoch ms), or when the wait gave up. */
  at: number;
}

/** Exact decimal USD ("0.000123456") to nanodollars. */
export function usdToNanos(usd: string): bigint {
  const negative = usd.startsWith("-");
  const [whole = "0", fraction = ""] = usd.replace(/^-/, "").split(".");
  if (!/^\d+$/.test(whole) || !/^\d*$/.test(fraction) || fraction.length > 9) throw new Error(`not a USD amount: ${usd}`);
  const nanos = BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, "0"));
  return negative ? -nanos : nanos;
}

export interface ExportedRow {
  id: string;
  status: string;
  errorCode: string;
  listNanos: bigint;
}

/** Nanodollars as USD with nine decimals, for tables and messages. */
export const usdOf = (nanos: bigint): string => (Number(nanos) / 1e9).toFixed(9);

/**
 * The organisation's activity as its CSV export lists it: request id and list cost per row. The
 * suite names its keys and workspaces without commas or quotes, so a row splits on commas; a row
 * that does not is an error rather than a guess.
 */
async function exportedRows(gatewayUrl: string, mgmtKey: string): Promise<ExportedRow[]> {
  const res = await fetch(`${gatewayUrl}/v1/activity/export`, { headers: { authorization: `Bearer ${mgmtKey}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`activity export: ${res.status} ${text.slice(0, 200)}`);
  const [header = "", ...lines] = text.trim().split("\n");
  const columns = header.split(",");
  const idAt = columns.indexOf("request_id");
  const listAt = columns.indexOf("list_price_usd");
  const statusAt = columns.indexOf("status");
  const errorAt = columns.indexOf("error_code");
  return lines
    .filter((l) => l.length > 0 && !l.startsWith("#"))
    .map((line) => {
      const cells = line.split(",");
      if (cells.length !== columns.length) throw new Error(`activity export row does not split into ${columns.length} cells: ${line}`);
      return { id: cells[idAt] ?? "", status: cells[statusAt] ?? "", errorCode: cells[errorAt] ?? "", listNanos: usdToNanos(cells[listAt] ?? "") };
    });
}

async function keyUsageNanos(gatewayUrl: string, mgmtKey: string, hash: string): Promise<bigint> {
  const res = await gatewayClient(gatewayUrl, mgmtKey).get("/v1/keys");
  if (res.status !== 200) throw new Error(`key list: ${res.status} ${res.text.slice(0, 200)}`);
  const usage = (res.json.data as Array<{ hash: string; usage: number | null }>).find((k) => k.hash === hash)?.usage;
  if (usage === undefined || usage === null) throw new Error(`key ${hash} has no usage in the key list`);
  // The list renders nanodollars as USD; these amounts are far below where a double loses a nanodollar.
  return BigInt(Math.round(usage * 1e9));
}

/** One look at activity and the ledger. */
export async function account(gatewayUrl: string, mgmtKey: string, keyHash: string, served: string[]): Promise<Account> {
  const [rows, usageNanos] = await Promise.all([exportedRows(gatewayUrl, mgmtKey), keyUsageNanos(gatewayUrl, mgmtKey, keyHash)]);
  const times = new Map<string, number>();
  for (const r of rows) times.set(r.id, (times.get(r.id) ?? 0) + 1);
  const missing = served.filter((id) => !times.has(id));
  const duplicated = [...times].filter(([, n]) => n > 1).map(([id]) => id);
  const recordedNanos = rows.reduce((sum, r) => sum + r.listNanos, 0n);
  const recorded = served.filter((id) => times.get(id) === 1).length;
  const holds = missing.length === 0 && duplicated.length === 0 && usageNanos === recordedNanos;
  const servedSet = new Set(served);
  const chargedUnserved = rows.filter((r) => !servedSet.has(r.id) && r.listNanos > 0n);
  const servedCosts: Record<string, number> = {};
  for (const r of rows) {
    if (!servedSet.has(r.id)) continue;
    const kind = `${r.status}${r.errorCode ? ` ${r.errorCode}` : ""} ${usdOf(r.listNanos)}`;
    servedCosts[kind] = (servedCosts[kind] ?? 0) + 1;
  }
  return { recorded, missing, duplicated, rows: rows.length, chargedUnserved, servedCosts, recordedNanos, usageNanos, holds, at: Date.now() };
}

/**
 * Looks until the invariants hold, and still hold `stableMs` later, or until `timeoutMs` passes;
 * returns the look that decided. Recording and settling are asynchronous (the bus, the outbox, a
 * lease's expiry), so a look right after the load may be early; one at the deadline is the verdict.
 * `at` of a holding account is when they first held.
 */
export async function settledAccount(
  gatewayUrl: string,
  mgmtKey: string,
  keyHash: string,
  served: string[],
  opts: { timeoutMs: number; stableMs?: number },
): Promise<Account> {
  const deadline = Date.now() + opts.timeoutMs;
  let firstHeld: number | undefined;
  for (;;) {
    let look: Account | Error;
    try {
      look = await account(gatewayUrl, mgmtKey, keyHash, served);
    } catch (err) {
      look = err instanceof Error ? err : new Error(String(err));
    }
    if (!(look instanceof Error) && look.holds) {
      firstHeld ??= look.at;
      if (look.at - firstHeld >= (opts.stableMs ?? 2_000)) return { ...look, at: firstHeld };
    } else {
      firstHeld = undefined;
      if (Date.now() > deadline) {
        if (look instanceof Error) throw look;
        return look;
      }
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
