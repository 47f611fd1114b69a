import type Redis from "ioredis";
import type { Logger } from "@router/logging";
import type { GenerationRecord } from "./generation-record";

/**
 * Generations of the last minute, so `GET /v1/generation` answers as soon as the completion was
 * sent, before activity has consumed the event. This instance's own requests are in memory (put
 * before the response ends, so no race); with Redis, every instance sees every instance's, and an
 * entry leaves memory once Redis has it, so a busy gateway does not carry a minute of records in
 * its heap (they would outlive the young generation and make every collection dearer).
 */
export interface RecentGenerations {
  /** Synchronous for this instance; the Redis copy is written in the background. */
  put(orgId: string, record: GenerationRecord): void;
  /** The record when it belongs to `orgId` and is still recent. */
  get(orgId: string, id: string): Promise<GenerationRecord | null>;
}

export interface RecentGenerationsOptions {
  redis?: Redis;
  log: Logger;
  ttlMs?: number;
  /** Memory bound for this instance's entries. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  orgId: string;
  record: GenerationRecord;
  expiresAt: number;
}

const redisKey = (id: string): string => `router:generation:${id}`;

export function createRecentGenerations(opts: RecentGenerationsOptions): RecentGenerations {
  const ttlMs = opts.ttlMs ?? 60_000;
  const maxEntries = opts.maxEntries ?? 20_000;
  const now = opts.now ?? Date.now;
  // Insertion order is expiry order (one TTL), so expired entries are always at the front.
  const entries = new Map<string, Entry>();

  const prune = (t: number): void => {
    for (const [id, e] of entries) {
      if (e.expiresAt > t && entries.size <= maxEntries) break;
      entries.delete(id);
    }
  };

  return {
    put(orgId, record) {
      const t = now();
      const entry: Entry = { orgId, record, expiresAt: t + ttlMs };
      entries.set(record.id, entry);
      prune(t);
      // Kept in memory only when the write failed: then this instance still answers for a minute.
      opts.redis
        ?.set(redisKey(record.id), JSON.stringify({ orgId, record }), "PX", ttlMs)
        .then(
          () => {
            if (entries.get(record.id) === entry) entries.delete(record.id);
          },
          (err: unknown) => opts.log.warn({ err, id: record.id }, "gateway.generation.cache_write_failed"),
        );
    },
    async get(orgId, id) {
      const local = entries.get(id);
      if (local && local.expiresAt > now()) return local.orgId === orgId ? local.record : null;
      if (!opts.redis) return null;
      try {
        const raw = await opts.redis.get(redisKey(id));
        if (!raw) return null;
        const parsed = JSON.parse(raw) as { orgId: string; record: GenerationRecord };
        return parsed.orgId === orgId ? parsed.record : null;
      } catch (err) {
        opts.log.warn({ err, id }, "gateway.generation.cache_read_failed");
        return null;
      }
    },
  };
}
