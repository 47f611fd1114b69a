import type Redis from "ioredis";
import type { EventHandler } from "./port";

/**
 * Remembers which events a consumer has handled. Delivery is at least once, so every consumer
 * checks here before acting.
 *
 * Services with Postgres get the strongest form from their own table instead: record the event id in
 * the same transaction as the effect (`CREATE TABLE processed_events (event_id text PRIMARY KEY,
 * processed_at timestamptz NOT NULL DEFAULT now())`, then `INSERT ... ON CONFLICT DO NOTHING` and
 * skip the effect when no row was inserted). Then a crash between the effect and the bookkeeping
 * cannot happen. They may also implement this interface on that table and use {@link idempotent}.
 */
export interface IdempotencyStore {
  seen(eventId: string): Promise<boolean>;
  remember(eventId: string): Promise<void>;
}

/**
 * Wraps a handler so an event whose id the store has seen is skipped. The id is remembered only
 * after the handler resolved, so a failed or crashed handler is retried. Two deliveries of one event
 * running at the same moment can both pass the check: handlers must still tolerate that rare case.
 */
export function idempotent(store: IdempotencyStore, handler: EventHandler): EventHandler {
  return async (event) => {
    if (await store.seen(event.id)) return;
    await handler(event);
    await store.remember(event.id);
  };
}

export interface MemoryIdempotencyOptions {
  /** How long an id is remembered. Default 24 h. */
  ttlMs?: number;
  /** Ids kept at most; the oldest are forgotten first. Default 100 000. */
  maxEntries?: number;
}

/** An in-process store for the one-process default and tests; forgets everything on restart. */
export function createMemoryIdempotencyStore(opts: MemoryIdempotencyOptions = {}): IdempotencyStore {
  const ttlMs = opts.ttlMs ?? 24 * 60 * 60 * 1000;
  const maxEntries = opts.maxEntries ?? 100_000;
  // Insertion order is expiry order (one TTL for all), so the oldest entries are at the front.
  const expiries = new Map<string, number>();
  const evictExpired = (now: number) => {
    for (const [id, expiresAt] of expiries) {
      if (expiresAt > now && expiries.size <= maxEntries) break;
      expiries.delete(id);
    }
  };
  return {
    async seen(eventId) {
      const expiresAt = expiries.get(eventId);
      return expiresAt !== undefined && expiresAt > Date.now();
    },
    async remember(eventId) {
      const now = Date.now();
      expiries.delete(eventId);
      expiries.set(eventId, now + ttlMs);
      evictExpired(now);
    },
  };
}

export interface RedisIdempotencyOptions {
  /** Namespace of the ids, usually the consumer group (service name): each consumer keeps its own. */
  scope: string;
  /** How long an id is remembered. Default 7 days, longer than any redelivery. */
  ttlMs?: number;
}

/** A store shared by every replica of a consumer: `SET NX` with a TTL per event id. */
export function createRedisIdempotencyStore(redis: Redis, opts: RedisIdempotencyOptions): IdempotencyStore {
  const ttlMs = opts.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
  const keyOf = (eventId: string) => `bus:seen:${opts.scope}:${eventId}`;
  return {
    async seen(eventId) {
      return (await redis.exists(keyOf(eventId))) === 1;
    },
    async remember(eventId) {
      await redis.set(keyOf(eventId), "1", "PX", ttlMs, "NX");
    },
  };
}
