import { randomBytes } from "node:crypto";
import os from "node:os";
import type Redis from "ioredis";
import type { Logger } from "@router/logging";
import { withDeadline } from "../deadline";
import { deadLetterOf, incomingOf, type Envelope } from "../envelope";
import type { BatchHandler, EventHandler, Subscription } from "../port";
import { retryDelay, type BusSettings } from "../settings";
import { Waker } from "../waker";
import { HEARTBEAT, LEAVE, RELEASE } from "./group-scripts";
import { ready } from "./ready";
import { isOutage } from "../failure";
import { redisFailureOf } from "./redis-errors";
import { redisKeys } from "./redis-keys";
import { autoclaimOf, entriesOf, envelopeOfFields, pendingOf, streamsOf, type StreamEntry } from "./stream-codec";

/** What a subscription needs from its bus. */
export interface SubscriptionContext {
  /** Non-blocking commands. */
  client: Redis;
  /** A new connection for this subscription's blocking reads. */
  newReader(): Redis;
  settings: BusSettings;
  log: Logger;
  partitionsOf(topic: string): Promise<number>;
  /** Publishes through the bus (and its outbox): used for dead letters. */
  publishEnvelope(envelope: Envelope): Promise<void>;
  /** This consumer stopped for good (logged already): the bus's `onFatal`. */
  fatal(err: unknown): void;
}

export interface RedisSubscriptionOptions {
  topic: string;
  group: string;
  /** The group this one replaces: on a stream where it exists, this group starts where it stood. */
  formerGroup?: string;
  handler: EventHandler;
  batchHandler?: BatchHandler;
  /** How long new events gather between reads for the batch handler (the bus's `batchWaitMs` unless the subscription set its own). */
  batchWaitMs: () => number;
  maxAttempts: number;
}

interface Delivery {
  id: string;
  /** Undefined when the entry was trimmed away after delivery: nothing to handle, only to acknowledge. */
  envelope: Envelope | undefined;
  attempt: number;
  state: "new" | "dead" | "done";
  /** A retry: bump Redis's delivery count before running the handler, so a takeover sees it. */
  retry: boolean;
  /** Was in a batch that failed: handled alone from now on. */
  alone?: boolean;
  error?: unknown;
}

interface OwnedPartition {
  index: number;
  stream: string;
  /** Entries still pending from before this member owned it: handled, in order, before new ones. */
  recovering: boolean;
  recoverAt: number;
  /** Delivered to this member, not yet acknowledged, in stream order. */
  queue: Delivery[];
  retryAt: number;
  /** Assigned to another member now: give it up once nothing of it is in flight. */
  revoked: boolean;
  sweepAt: number;
}

// Marks entries handed over on close as long idle, so the next owner takes them at once.
const HANDED_OVER_IDLE_MS = 365 * 24 * 60 * 60 * 1000;
const READ_COUNT = 10;
/** With a batch handler one read may bring a whole batch. */
const BATCH_READ_COUNT = 100;
const SWEEP_COUNT = 50;
/** Consecutive failures that are not an outage (a refused command, a bug) before the consumer stops. */
const MAX_BROKEN_FAILURES = 5;

/**
 * One member of a consumer group on Redis Streams. A heartbeat keeps its membership and partition
 * leases; the consumer loop handles owned partitions one event at a time: first what is pending
 * from a previous owner (taken over with XCLAIM once idle for `reclaimIdleMs`), then new entries
 * (XREADGROUP on its own connection), acknowledging (XACK) after the handler resolves. A failed
 * handler is retried with backoff and dead-lettered after `maxAttempts` deliveries. A handler
 * running past `reclaimIdleMs` counts as crashed: the member leaves the group until it returns.
 */
export class RedisSubscription implements Subscription {
  readonly consumer = `${sanitize(os.hostname())}-${process.pid}-${randomBytes(4).toString("hex")}`;
  private readonly parts = new Map<number, OwnedPartition>();
  /** Partitions the loop is working on right now: the heartbeat never gives those up. */
  private readonly active = new Set<OwnedPartition>();
  private partitionCount = 0;
  private inflight: { since: number; partition: OwnedPartition; ids: string[] } | undefined;
  private stalled = false;
  private closing = false;
  private closed: Promise<void> | undefined;
  private loop: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private turn = 0;
  /** With a batch handler: no new read before this time, so that events gather into one batch. */
  private nextReadAt = 0;
  private readonly reader: Redis;
  private readonly waker = new Waker();
  private readonly log: Logger;
  private readonly leaseMs: number;
  /** Streams whose group this member made sure of. */
  private readonly grouped = new Set<string>();
  private brokenSteps = 0;
  private brokenTicks = 0;
  private stopped = false;

  constructor(
    private readonly ctx: SubscriptionContext,
    private readonly opts: RedisSubscriptionOptions,
  ) {
    this.reader = ctx.newReader();
    this.log = ctx.log.child({ topic: opts.topic, group: opts.group, consumer: this.consumer });
    this.leaseMs = Math.max(ctx.settings.pollMs * 5, 2_000);
  }

  /** Joins the group and takes its first partitions, then starts consuming. */
  async start(): Promise<void> {
    await withDeadline(ready(this.reader), this.ctx.settings.publishTimeoutMs);
    await this.tick();
    this.heartbeat = setInterval(() => this.tickOnce(), this.ctx.settings.pollMs);
    this.heartbeat.unref();
    this.loop = this.run();
  }

  close(): Promise<void> {
    this.closed ??= this.stop();
    return this.closed;
  }

  private async stop(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeat);
    this.waker.wake();
    await this.ticking;
    // Cuts a blocking read short; a reply lost this way stays pending and is handed over below.
    this.reader.disconnect();
    const finished = await withDeadline(this.loop, this.ctx.settings.closeTimeoutMs);
    try {
      await this.handOver(finished ? [] : this.inflight?.ids ?? []);
      await this.ctx.client.eval(LEAVE, 1 + this.partitionCount, this.membersKey(), ...this.leaseKeys(), this.consumer);
    } catch (err) {
      // The leases expire and the pending entries become claimable: others take over, only later.
      this.log.warn({ err }, "bus.consumer.leave_failed");
    }
    this.parts.clear();
  }

  private tickOnce(): void {
    if (this.ticking || this.closing) return;
    this.ticking = this.tick()
      .then(() => void (this.brokenTicks = 0))
      .catch((err: unknown) => {
        if (this.closing) return;
        this.log.warn({ err }, "bus.consumer.heartbeat_failed");
        if (redisFailureOf(err) !== "unreachable" && ++this.brokenTicks >= MAX_BROKEN_FAILURES) this.stopFor(err);
      })
      .finally(() => (this.ticking = undefined));
  }

  /** Heartbeat: membership, lease renewal, taking assigned partitions, giving up revoked ones. */
  private async tick(): Promise<void> {
    if (this.closing) return;
    if (this.partitionCount === 0) this.partitionCount = await this.ctx.partitionsOf(this.opts.topic);
    if (this.inflight && Date.now() - this.inflight.since >= this.ctx.settings.reclaimIdleMs) {
      if (!this.stalled) await this.leaveStalled();
      return;
    }
    this.stalled = false;
    const reply = await this.ctx.client.eval(
      HEARTBEAT,
      1 + this.partitionCount,
      this.membersKey(),
      ...this.leaseKeys(),
      this.consumer,
      this.leaseMs,
    );
    const flags = Array.isArray(reply) ? reply.map(Number) : [];
    let acquired = false;
    for (let i = 0; i < this.partitionCount; i++) {
      const held = flags[2 * i] === 1;
      const assigned = flags[2 * i + 1] === 1;
      const owned = this.parts.get(i);
      if (owned && !held) {
        this.parts.delete(i);
        this.log.warn({ partition: i }, "bus.consumer.partition_lost");
      } else if (owned) {
        owned.revoked = !assigned;
      } else if (held) {
        await this.ensureGroup(redisKeys.stream(this.opts.topic, i));
        this.parts.set(i, this.newPartition(i));
        acquired = true;
      }
    }
    for (const part of this.parts.values()) {
      if (part.revoked && !this.active.has(part) && this.idle(part)) await this.release(part);
    }
    if (acquired) this.waker.wake();
  }

  /** Nothing of the partition in flight: its queue is empty, or waits for a retry. */
  private idle(part: OwnedPartition): boolean {
    return part.queue.length === 0 || part.retryAt > Date.now();
  }

  private async release(part: OwnedPartition): Promise<void> {
    this.parts.delete(part.index);
    await this.markIdle(part.stream, part.queue.map((d) => d.id));
    await this.ctx.client.eval(RELEASE, 1, this.leaseKey(part.index), this.consumer);
  }

  private async leaveStalled(): Promise<void> {
    this.stalled = true;
    this.log.warn({ reclaimIdleMs: this.ctx.settings.reclaimIdleMs }, "bus.consumer.stalled");
    this.parts.clear();
    await this.ctx.client.eval(LEAVE, 1 + this.partitionCount, this.membersKey(), ...this.leaseKeys(), this.consumer);
  }

  /**
   * The consumer loop. An outage (Redis away, failing over, loading) is retried every `pollMs` for
   * as long as it lasts; anything else (a refused command, a bug) is retried with backoff
   * `MAX_BROKEN_FAILURES` times, then the consumer stops for good and the bus's `onFatal` runs:
   * a loop failing forever behind a ready service would lose its topic silently.
   */
  private async run(): Promise<void> {
    let failing = false;
    while (!this.closing) {
      try {
        await this.step();
        failing = false;
        this.brokenSteps = 0;
      } catch (err) {
        if (this.closing) break;
        let failure: unknown = err;
        if (isNoGroup(err)) {
          if (!failing) this.log.warn({ err }, "bus.consumer.failed");
          failing = true;
          // The group vanished (Redis lost its data, or it was destroyed): recreate it and go on.
          failure = await this.recreateGroups().then(
            () => undefined,
            (recreating: unknown) => recreating,
          );
          if (failure === undefined) {
            await this.waker.sleep(this.ctx.settings.pollMs);
            continue;
          }
        }
        if (redisFailureOf(failure) === "unreachable") {
          if (!failing) this.log.warn({ err: failure }, "bus.consumer.failed");
          failing = true;
          await this.waker.sleep(this.ctx.settings.pollMs);
        } else {
          this.brokenSteps += 1;
          this.log.warn({ err: failure, failures: this.brokenSteps }, "bus.consumer.failed");
          if (this.brokenSteps >= MAX_BROKEN_FAILURES) return this.stopFor(failure);
          await this.waker.sleep(retryDelay(this.ctx.settings, this.brokenSteps));
        }
      }
    }
  }

  /** Stops consuming for good: leaves the group (others take the partitions) and reports it. */
  private stopFor(err: unknown): void {
    if (this.stopped || this.closing) return;
    this.stopped = true;
    this.log.fatal({ err }, "bus.consumer.stopped");
    void this.close();
    this.ctx.fatal(err);
  }

  private async step(): Promise<void> {
    const now = Date.now();
    const parts = this.rotation();
    const ready = parts.find((p) => p.queue.length > 0 && p.retryAt <= now);
    if (ready) return this.working(ready, () => this.handleHead(ready));
    const recovering = parts.find((p) => p.recovering && p.queue.length === 0 && p.recoverAt <= now);
    if (recovering) return this.working(recovering, () => this.recoverStep(recovering));
    const sweeping = parts.find((p) => !p.recovering && p.queue.length === 0 && p.sweepAt <= now);
    if (sweeping) return this.working(sweeping, () => this.sweep(sweeping));

    const wakeAt = Math.min(
      now + this.ctx.settings.pollMs,
      ...parts.map((p) => (p.queue.length > 0 ? p.retryAt : p.recovering ? p.recoverAt : p.sweepAt)),
    );
    const wait = Math.max(1, wakeAt - now);
    const live = parts.filter((p) => !p.recovering && !p.revoked && p.queue.length === 0);
    if (live.length === 0) return this.waker.sleep(wait);
    if (this.nextReadAt > now) return this.waker.sleep(Math.min(wait, this.nextReadAt - now));
    for (const p of live) this.active.add(p);
    try {
      await this.readNew(live, wait);
    } finally {
      for (const p of live) this.active.delete(p);
    }
  }

  private async working(part: OwnedPartition, work: () => Promise<void>): Promise<void> {
    this.active.add(part);
    try {
      await work();
    } finally {
      this.active.delete(part);
    }
  }

  private rotation(): OwnedPartition[] {
    const parts = [...this.parts.values()];
    this.turn = (this.turn + 1) % Math.max(1, parts.length);
    return [...parts.slice(this.turn), ...parts.slice(0, this.turn)];
  }

  private async handleHead(part: OwnedPartition): Promise<void> {
    const batch = this.batchAtHead(part);
    if (batch.length > 1) return this.handleBatch(part, batch);
    const delivery = part.queue[0]!;
    if (delivery.state === "new") await this.handle(part, delivery);
    if (delivery.state === "dead") {
      const envelope = delivery.envelope!;
      await this.ctx.publishEnvelope(deadLetterOf(envelope, delivery.attempt, delivery.error));
      this.log.warn({ eventId: envelope.id, attempts: delivery.attempt, err: delivery.error }, "bus.event.dead_lettered");
      delivery.state = "done";
    }
    if (delivery.state === "done") {
      await this.ctx.client.xack(part.stream, this.opts.group, delivery.id);
      if (part.queue[0] === delivery) part.queue.shift();
    }
  }

  /** The run of first deliveries at the head of the queue that may go to the batch handler together. */
  private batchAtHead(part: OwnedPartition): Delivery[] {
    if (!this.opts.batchHandler) return [];
    const batch: Delivery[] = [];
    for (const d of part.queue) {
      if (d.state !== "new" || !d.envelope || d.retry || d.alone || d.attempt > this.opts.maxAttempts) break;
      batch.push(d);
    }
    return batch;
  }

  /**
   * Runs the batch handler on `batch` and acknowledges all of it in one call. A failed batch counts
   * as no delivery: its events go back to being handled alone, each with its own retries.
   */
  private async handleBatch(part: OwnedPartition, batch: Delivery[]): Promise<void> {
    this.inflight = { since: Date.now(), partition: part, ids: batch.map((d) => d.id) };
    try {
      await this.opts.batchHandler!(batch.map((d) => incomingOf(d.envelope!, d.attempt)));
    } catch (err) {
      this.log.warn({ size: batch.length, firstEventId: batch[0]?.envelope?.id, err }, "bus.batch_handler.failed");
      for (const d of batch) d.alone = true;
      return;
    } finally {
      this.inflight = undefined;
    }
    await this.ctx.client.xack(part.stream, this.opts.group, ...batch.map((d) => d.id));
    const handled = new Set(batch);
    part.queue = part.queue.filter((d) => !handled.has(d));
  }

  private async handle(part: OwnedPartition, delivery: Delivery): Promise<void> {
    const envelope = delivery.envelope;
    if (!envelope) {
      delivery.state = "done";
      return;
    }
    if (delivery.attempt > this.opts.maxAttempts) {
      // Taken over after consumers crashed on it maxAttempts times: a poison event.
      delivery.state = "dead";
      delivery.attempt -= 1;
      delivery.error = new Error("handler crashed on every delivery");
      return;
    }
    if (delivery.retry) {
      const claimed = entriesOf(
        await this.ctx.client.callBuffer("XCLAIM", part.stream, this.opts.group, this.consumer, 0, delivery.id),
      );
      delivery.retry = false;
      if (claimed.length === 0) {
        delivery.state = "done";
        return;
      }
    }
    this.inflight = { since: Date.now(), partition: part, ids: [delivery.id] };
    try {
      await this.opts.handler(incomingOf(envelope, delivery.attempt));
      delivery.state = "done";
    } catch (err) {
      const outage = isOutage(err);
      if (delivery.attempt >= this.opts.maxAttempts && !outage) {
        delivery.state = "dead";
        delivery.error = err;
      } else {
        this.log.warn({ eventId: envelope.id, attempt: delivery.attempt, err }, "bus.handler.failed");
        part.retryAt = Date.now() + retryDelay(this.ctx.settings, delivery.attempt);
        delivery.attempt = outage ? Math.min(delivery.attempt + 1, this.opts.maxAttempts) : delivery.attempt + 1;
        delivery.retry = true;
      }
    } finally {
      this.inflight = undefined;
    }
  }

  /** Takes the oldest pending entry of a newly owned partition once it is claimable. */
  private async recoverStep(part: OwnedPartition): Promise<void> {
    const [head] = pendingOf(await this.ctx.client.call("XPENDING", part.stream, this.opts.group, "-", "+", 1));
    if (!head) {
      part.recovering = false;
      await this.forgetIdleConsumers(part.stream);
      return;
    }
    const minIdle = head.consumer === this.consumer ? 0 : this.ctx.settings.reclaimIdleMs;
    if (head.idleMs < minIdle) {
      part.recoverAt = Date.now() + (minIdle - head.idleMs);
      return;
    }
    const [entry] = entriesOf(
      await this.ctx.client.callBuffer("XCLAIM", part.stream, this.opts.group, this.consumer, minIdle, head.id),
    );
    if (!entry) return; // acknowledged or deleted meanwhile: look at the new head
    if (head.consumer !== this.consumer) {
      this.log.info({ entryId: head.id, from: head.consumer, deliveries: head.deliveries }, "bus.consumer.reclaimed");
    }
    part.queue.push(this.deliveryOf(entry, head.deliveries + 1));
  }

  /**
   * Reclaims (XAUTOCLAIM) entries of an owned partition left pending too long by anyone, e.g. a reply
   * lost with a connection: the safety net behind leases and hand-overs.
   */
  private async sweep(part: OwnedPartition): Promise<void> {
    part.sweepAt = Date.now() + this.ctx.settings.reclaimIdleMs;
    const { reclaimIdleMs } = this.ctx.settings;
    const { entries } = autoclaimOf(
      await this.ctx.client.callBuffer(
        "XAUTOCLAIM",
        part.stream,
        this.opts.group,
        this.consumer,
        reclaimIdleMs,
        "0-0",
        "COUNT",
        SWEEP_COUNT,
      ),
    );
    if (entries.length === 0) return;
    const counts = new Map(
      pendingOf(
        await this.ctx.client.call("XPENDING", part.stream, this.opts.group, "-", "+", SWEEP_COUNT, this.consumer),
      ).map((p) => [p.id, p.deliveries]),
    );
    this.log.info({ reclaimed: entries.length, partition: part.index }, "bus.consumer.reclaimed");
    for (const entry of entries) part.queue.push(this.deliveryOf(entry, counts.get(entry.id) ?? 2));
  }

  private async readNew(live: OwnedPartition[], blockMs: number): Promise<void> {
    const reply = await this.reader.callBuffer(
      "XREADGROUP",
      "GROUP",
      this.opts.group,
      this.consumer,
      "COUNT",
      this.opts.batchHandler ? BATCH_READ_COUNT : READ_COUNT,
      "BLOCK",
      Math.ceil(blockMs),
      "STREAMS",
      ...live.map((p) => p.stream),
      ...live.map(() => ">"),
    );
    const streams = streamsOf(reply);
    const gatherMs = this.opts.batchHandler ? this.opts.batchWaitMs() : 0;
    if (gatherMs > 0) {
      const read = streams.reduce((n, s) => n + s.entries.length, 0);
      // A full read means a backlog: read on at once. Otherwise let the next batch gather.
      if (read > 0 && read < BATCH_READ_COUNT) this.nextReadAt = Date.now() + gatherMs;
    }
    for (const { stream, entries } of streams) {
      const part = live.find((p) => p.stream === stream);
      if (!part || this.parts.get(part.index) !== part) {
        // Lost the partition while reading: let its next owner take these at once.
        await this.markIdle(stream, entries.map((e) => e.id));
        continue;
      }
      for (const entry of entries) part.queue.push(this.deliveryOf(entry, 1));
    }
  }

  /**
   * On close: lets the next owners take what this member read but did not finish, without waiting,
   * except what a handler still runs on (`keepIds`), which stays claimable only once idle.
   */
  private async handOver(keepIds: string[]): Promise<void> {
    for (const part of this.parts.values()) {
      const mine = pendingOf(
        await this.ctx.client.call("XPENDING", part.stream, this.opts.group, "-", "+", 1000, this.consumer),
      );
      await this.markIdle(part.stream, mine.map((p) => p.id).filter((id) => !keepIds.includes(id)));
    }
  }

  private async markIdle(stream: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ctx.client.call(
      "XCLAIM",
      stream,
      this.opts.group,
      this.consumer,
      0,
      ...ids,
      "IDLE",
      HANDED_OVER_IDLE_MS,
      "JUSTID",
    );
  }

  /** Drops consumers with nothing pending, so names of stopped members do not pile up in the group. */
  private async forgetIdleConsumers(stream: string): Promise<void> {
    const reply = await this.ctx.client.call("XINFO", "CONSUMERS", stream, this.opts.group);
    if (!Array.isArray(reply)) return;
    for (const fields of reply.map(fieldsOfReply)) {
      const name = String(fields.get("name"));
      if (name !== this.consumer && Number(fields.get("pending")) === 0) {
        await this.ctx.client.call("XGROUP", "DELCONSUMER", stream, this.opts.group, name);
      }
    }
  }

  private deliveryOf(entry: StreamEntry, attempt: number): Delivery {
    return {
      id: entry.id,
      envelope: entry.fields ? envelopeOfFields(this.opts.topic, entry.fields) : undefined,
      attempt,
      state: "new",
      retry: false,
    };
  }

  private newPartition(index: number): OwnedPartition {
    return {
      index,
      stream: redisKeys.stream(this.opts.topic, index),
      recovering: true,
      recoverAt: 0,
      queue: [],
      retryAt: 0,
      revoked: false,
      sweepAt: Date.now() + this.ctx.settings.reclaimIdleMs,
    };
  }

  private async ensureGroup(stream: string): Promise<void> {
    if (this.grouped.has(stream)) return;
    const start = await this.startOf(stream);
    try {
      await this.ctx.client.call("XGROUP", "CREATE", stream, this.opts.group, start, "MKSTREAM");
      if (start !== "0") this.log.info({ stream, from: this.opts.formerGroup, start }, "bus.consumer.group_migrated");
    } catch (err) {
      if (!String((err as Error).message).startsWith("BUSYGROUP")) throw err;
    }
    this.grouped.add(stream);
  }

  /**
   * Where a new group starts on `stream`: where the group it replaces stood, its pending entries
   * included (delivered, not yet acknowledged: they are delivered again, never skipped); without
   * one, at the start of the stream, so events published before the group first subscribed are not
   * lost.
   */
  private async startOf(stream: string): Promise<string> {
    const former = this.opts.formerGroup;
    if (!former) return "0";
    let reply: unknown;
    try {
      reply = await this.ctx.client.call("XINFO", "GROUPS", stream);
    } catch (err) {
      if (String((err as Error).message).includes("no such key")) return "0";
      throw err;
    }
    const groups = Array.isArray(reply) ? reply.map(fieldsOfReply) : [];
    if (groups.some((g) => g.get("name") === this.opts.group)) return "0"; // exists: CREATE will say BUSYGROUP
    const old = groups.find((g) => g.get("name") === former);
    if (!old) return "0";
    const lastDelivered = String(old.get("last-delivered-id"));
    if (Number(old.get("pending")) === 0) return lastDelivered;
    const summary = await this.ctx.client.call("XPENDING", stream, former);
    const oldestPending = Array.isArray(summary) && summary[1] ? String(summary[1]) : undefined;
    return oldestPending ? entryBefore(oldestPending) : lastDelivered;
  }

  private async recreateGroups(): Promise<void> {
    this.grouped.clear();
    for (const part of this.parts.values()) {
      await this.ensureGroup(part.stream);
      part.recovering = true;
    }
  }

  private membersKey(): string {
    return redisKeys.members(this.opts.topic, this.opts.group);
  }

  private leaseKey(partition: number): string {
    return redisKeys.lease(this.opts.topic, this.opts.group, partition);
  }

  private leaseKeys(): string[] {
    return Array.from({ length: this.partitionCount }, (_, i) => this.leaseKey(i));
  }
}

/** The field/value list of an XINFO reply as a map. */
function fieldsOfReply(info: unknown): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  if (!Array.isArray(info)) return fields;
  for (let i = 0; i + 1 < info.length; i += 2) fields.set(String(info[i]), info[i + 1]);
  return fields;
}

/** The largest stream id below `id`: a group created there delivers `id` next. */
function entryBefore(id: string): string {
  const [ms = "0", seq = "0"] = id.split("-");
  if (BigInt(seq) > 0n) return `${ms}-${BigInt(seq) - 1n}`;
  if (BigInt(ms) > 0n) return `${BigInt(ms) - 1n}-18446744073709551615`;
  return "0";
}

function isNoGroup(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith("NOGROUP");
}

function sanitize(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40);
}
