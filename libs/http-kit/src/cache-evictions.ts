import type { IncomingHttpHeaders } from "node:http";
import type { Response } from "express";

/**
 * The console's answer to a change names the edge's cache entries it made stale: the keys (by
 * hash) and dashboard sessions (by token hash) the gateway must forget. The forwarding gateway
 * strips these headers, evicts the entries before it answers, and tells every other replica.
 */
export const EVICT_KEYS_HEADER = "x-router-evict-keys";
export const EVICT_SESSIONS_HEADER = "x-router-evict-sessions";

/** Hashes are hex: a comma never occurs in one. */
const SEPARATOR = ",";

/**
 * Names every entry: sent instead of a list that would not fit in a header (a member with hundreds
 * of keys). The gateway then drops its whole cache, which refills within moments.
 */
export const EVICT_ALL = "*";

/** Past this many characters a list becomes `EVICT_ALL` (proxies and clients take 8 KB headers at least). */
const MAX_LIST_CHARS = 6_000;

export interface CacheEvictions {
  keys: string[];
  sessions: string[];
}

function add(res: Response, header: string, hashes: readonly string[]): void {
  if (hashes.length === 0) return;
  const current = res.getHeader(header);
  if (current === EVICT_ALL) return;
  const before = typeof current === "string" && current !== "" ? current.split(SEPARATOR) : [];
  const list = [...new Set([...before, ...hashes])].join(SEPARATOR);
  res.setHeader(header, list.length > MAX_LIST_CHARS ? EVICT_ALL : list);
}

/** Names keys whose records changed (paused, resumed, revoked, re-homed, their person's role). */
export function evictKeys(res: Response, hashes: readonly string[]): void {
  add(res, EVICT_KEYS_HEADER, hashes);
}

/** Names dashboard sessions that ended or changed. */
export function evictSessions(res: Response, tokenHashes: readonly string[]): void {
  add(res, EVICT_SESSIONS_HEADER, tokenHashes);
}

/** What an answer's headers name; both lists empty when it names nothing, `[EVICT_ALL]` for everything. */
export function evictionsOf(headers: IncomingHttpHeaders): CacheEvictions {
  const list = (name: string): string[] => {
    const v = headers[name];
    return typeof v === "string" && v !== "" ? v.split(SEPARATOR) : [];
  };
  return { keys: list(EVICT_KEYS_HEADER), sessions: list(EVICT_SESSIONS_HEADER) };
}
