import type Redis from "ioredis";
import type { Logger } from "@router/logging";
import { events } from "@router/proto";
import { generationRecordOf, type GenerationRecord } from "./generation-record";

/**
 * Generations of the last minute, so `GET /v1/generation` answers as soon as the completion was
 * sent, before activity has consumed the event. This instance's own requests are in memory (put
 * before the response ends, so no race); with Redis, every instance sees every instance's, and an
 * entry leaves memory once Redis has it, so a busy gateway does not carry a minute of records in
 * its heap (they would outlive the young generation and make every collection dearer).
 *
 * What is kept is the completion event as the bus carries it (protobuf bytes, already encoded for
 * the publish): the record is rendered only when someone asks, which few requests are.
 *
 * The Redis copies of the requests that finished within `writeEveryMs` go in one pipeline: one
 * socket write (and one wake-up of Redis) for several requests instead of one each.
 */
export interface RecentGenerations {
  /** The encoded `RequestCompleted` of generation `id`. Synchronous for this instance; the Redis copy is written in the background. */
  put(orgId: string, id: string, event: Uint8Array): void;
  /** The record when it belongs to `orgId` and is still recent. */
  get(orgId: string, id: string): Promise<GenerationRecord | null>;
}

export interface RecentGenerationsOptions {
  redis?: Redis;
  log: Logger;
  ttlMs?: number;
  /** Memory bound for this instance's entries. */
  maxEntries?: number;
  /** How long copies wait to be written to Redis together. Default 20 ms. */
  writeEveryMs?: number;
  now?: () => number;
}

interface Entry {
  orgId: string;
  event: Uint8Array;
  expiresAt: number;
}

const redisKey = (id: string): string => `router:generation:${id}`;

/** A JSON value is an entry a gateway from before the events were kept wrote (`{"orgId", "record"}`). */
const OPENING_BRACE = 0x7b;

function recordFrom(stored: Buffer, orgId: string): GenerationRecord | null {
  if (stored[0] === OPENING_BRACE) {
    const parsed = JSON.parse(stored.toString("utf8")) as { orgId: string; record: GenerationRecord };
    return parsed.orgId === orgId ? parsed.record : null;
  }
  const event = events.RequestCompleted.decode(stored);
  return event.orgId === orgId ? generationRecordOf(event) : null;
}

export function createRecentGenerations(opts: RecentGenerationsOptions): RecentGenerations {
  const ttlMs = opts.ttlMs ?? 60_000;
  const maxEntries = opts.maxEntries ?? 20_000;
  const writeEveryMs = opts.writeEveryMs ?? 20;
  const now = opts.now ?? Date.now;
  // Waiting for the next pipeline to Redis.
  let unwritten: Array<{ id: string; entry: Entry }> = [];
  let writeTimer: NodeJS.Timeout | undefined;
  // Insertion order is expiry order (one TTL), so expired entries are always at the front.
  const entries = new Map<string, Entry>();

  const prune = (t: number): void => {
    for (const [id, e] of entries) {
      if (e.expiresAt > t && entries.size <= maxEntries) break;
      entries.delete(id);
    }
  };

  const writeCopies = (redis: Redis): void => {
    writeTimer = undefined;
    const batch = unwritten;
    unwritten = [];
    const pipeline = redis.pipeline();
    for (const { id, entry } of batch) {
      const { event } = entry;
      pipeline.set(redisKey(id), Buffer.from(event.buffer, event.byteOffset, event.byteLength), "PX", ttlMs);
    }
    // Kept in memory only when the write failed: then this instance still answers for a minute.
    const written = (at: number): void => {
      const { id, entry } = batch[at]!;
      if (entries.get(id) === entry) entries.delete(id);
    };
    const failed = (err: unknown, at: number): void => opts.log.warn({ err, id: batch[at]!.id }, "gateway.generation.cache_write_failed");
    pipeline.exec().then(
      (results) => results?.forEach(([err], at) => (err ? failed(err, at) : written(at))),
      (err: unknown) => batch.forEach((_, at) => failed(err, at)),
    );
  };

  return {
    put(orgId, id, event) {
      const t = now();
      const entry: Entry = { orgId, event, expiresAt: t + ttlMs };
      entries.set(id, entry);
      prune(t);
      const { redis } = opts;
      if (!redis) return;
      unwritten.push({ id, entry });
      writeTimer ??= setTimeout(() => writeCopies(redis), writeEveryMs).unref();
    },
    async get(orgId, id) {
      const local = entries.get(id);
      if (local && local.expiresAt > now()) return local.orgId === orgId ? generationRecordOf(events.RequestCompleted.decode(local.event)) : null;
      if (!opts.redis) return null;
      try {
        const stored = await opts.redis.getBuffer(redisKey(id));
        return stored ? recordFrom(stored, orgId) : null;
      } catch (err) {
        opts.log.warn({ err, id }, "gateway.generation.cache_read_failed");
        return null;
      }
    },
  };
}
