import type Redis from "ioredis";
import { LRUCache } from "lru-cache";
import type { Clock } from "@router/money";

/** Pins never outlive this much idle time (docs/adr, ADR 0029). */
export const MAX_PIN_IDLE_MS = 60 * 60_000;

/** One served request's pin: the endpoint that served `modelId` for the key `hash`. */
export interface PinWrite {
  orgId: string;
  hash: string;
  /** `sticky` moves the pin to the endpoint that served; `pinned` keeps a pin once it exists. */
  mode: "sticky" | "pinned";
  modelId: string;
  endpointId: string;
  /** When the request was made: a redelivered older event never replaces a newer pin. */
  atMs: number;
}

/**
 * Sticky pins: per organisation and sticky key, one endpoint per model. Reading a key's pins
 * restarts its idle time; a key unused for the idle TTL is forgotten with all its pins.
 */
export interface PinStore {
  /** Model id to pinned endpoint id for the key; empty when none. */
  read(orgId: string, hash: string): Promise<Map<string, string>>;
  record(pin: PinWrite): Promise<void>;
  close(): void;
}

// A field is "<atMs> <endpointId>".
const field = (atMs: number, endpointId: string) => `${atMs} ${endpointId}`;
const endpointOf = (value: string) => value.slice(value.indexOf(" ") + 1);
const atOf = (value: string) => Number(value.slice(0, value.indexOf(" ")));

// KEYS[1] the key's hash; ARGV model, "<atMs> <endpoint>", atMs, idle ttl ms, "1" to keep an existing pin.
const RECORD_PIN = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local at = tonumber(string.match(current, '^(%d+) '))
  if ARGV[5] == '1' or (at and at > tonumber(ARGV[3])) then
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

interface PinCommands {
  recordPin(key: string, model: string, value: string, atMs: string, ttlMs: string, keep: string): Promise<number>;
}

/** Pins in Redis, shared by every routing replica: one hash per key, expiring after the idle TTL. */
export class RedisPinStore implements PinStore {
  constructor(
    private readonly redis: Redis,
    private readonly opts: { idleTtlMs: number; keyPrefix?: string },
  ) {
    redis.defineCommand("recordPin", { numberOfKeys: 1, lua: RECORD_PIN });
  }

  private key(orgId: string, hash: string): string {
    return `${this.opts.keyPrefix ?? "router:sticky:"}${orgId}:${hash}`;
  }

  async read(orgId: string, hash: string): Promise<Map<string, string>> {
    const key = this.key(orgId, hash);
    // One round trip: the pins, and the idle time restarted (a no-op on a missing key).
    const results = await this.redis.pipeline().hgetall(key).pexpire(key, this.opts.idleTtlMs).exec();
    const [err, fields] = results?.[0] ?? [null, {}];
    if (err) throw err;
    const pins = new Map<string, string>();
    for (const [model, value] of Object.entries((fields ?? {}) as Record<string, string>)) pins.set(model, endpointOf(value));
    return pins;
  }

  async record(pin: PinWrite): Promise<void> {
    await (this.redis as unknown as PinCommands).recordPin(
      this.key(pin.orgId, pin.hash),
      pin.modelId,
      field(pin.atMs, pin.endpointId),
      String(pin.atMs),
      String(this.opts.idleTtlMs),
      pin.mode === "pinned" ? "1" : "0",
    );
  }

  close(): void {
    this.redis.disconnect();
  }
}

/** Pins in this process (the embedded one-process default), with the same rules. */
export class MemoryPinStore implements PinStore {
  private readonly pins: LRUCache<string, Map<string, string>>;

  constructor(clock: Clock, opts: { idleTtlMs: number; maxKeys?: number }) {
    this.pins = new LRUCache({
      // A size bound grows with the pins held; `max` would preallocate every slot at start.
      maxSize: opts.maxKeys ?? 100_000,
      sizeCalculation: () => 1,
      ttl: opts.idleTtlMs,
      updateAgeOnGet: true,
      perf: { now: () => clock.now().getTime() },
      ttlResolution: 0,
    });
  }

  read(orgId: string, hash: string): Promise<Map<string, string>> {
    const held = this.pins.get(`${orgId}:${hash}`);
    const pins = new Map<string, string>();
    for (const [model, value] of held ?? []) pins.set(model, endpointOf(value));
    return Promise.resolve(pins);
  }

  record(pin: PinWrite): Promise<void> {
    const key = `${pin.orgId}:${pin.hash}`;
    const held = this.pins.get(key) ?? new Map<string, string>();
    const current = held.get(pin.modelId);
    if (current === undefined || (pin.mode === "sticky" && atOf(current) <= pin.atMs)) {
      held.set(pin.modelId, field(pin.atMs, pin.endpointId));
    }
    this.pins.set(key, held);
    return Promise.resolve();
  }

  close(): void {
    this.pins.clear();
  }
}
