import type { Logger } from "@router/logging";
import { deadLetterOf, incomingOf, payloadCopy, type Envelope } from "../envelope";
import { isOutage } from "../failure";
import { partitionOf } from "../partition";
import type { BatchHandler, EventHandler } from "../port";
import { retryDelay, type BusSettings } from "../settings";

/** Events kept per partition for groups that have not read them; older ones are dropped, like a retention limit. */
const RETAINED_PER_PARTITION = 100_000;
// Consumed events are dropped in batches: removing from the front of an array costs its length.
const TRIM_BATCH = 1_024;
/** Most consecutive events of one partition handed to a batch handler at once. */
const MAX_BATCH = 256;

interface PartitionLog {
  /** Offset of `events[0]`. */
  base: number;
  events: Envelope[];
}

/**
 * One process's broker: every memory bus of the process talks to it, as clients of one Kafka or Redis
 * would, so services started in one process see each other's events.
 */
export class MemoryBroker {
  private readonly topics = new Map<string, MemoryTopic>();

  topic(name: string, partitions: number): MemoryTopic {
    let topic = this.topics.get(name);
    if (!topic) {
      topic = new MemoryTopic(name, partitions);
      this.topics.set(name, topic);
    }
    return topic;
  }

  append(envelope: Envelope, partitions: number): void {
    this.topic(envelope.topic, partitions).append(envelope);
  }
}

export class MemoryTopic {
  readonly logs: PartitionLog[];
  private readonly groups = new Map<string, MemoryGroup>();

  constructor(
    readonly name: string,
    partitions: number,
  ) {
    this.logs = Array.from({ length: partitions }, () => ({ base: 0, events: [] }));
  }

  append(envelope: Envelope): void {
    const log = this.logOf(partitionOf(envelope.key, this.logs.length));
    log.events.push(envelope);
    if (log.events.length > RETAINED_PER_PARTITION + TRIM_BATCH) {
      log.events.splice(0, TRIM_BATCH);
      log.base += TRIM_BATCH;
    }
    for (const group of this.groups.values()) group.schedulePump();
  }

  group(name: string, create: () => MemoryGroup): MemoryGroup {
    let group = this.groups.get(name);
    if (!group) {
      group = create();
      this.groups.set(name, group);
    }
    return group;
  }

  logOf(partition: number): PartitionLog {
    const log = this.logs[partition];
    if (!log) throw new Error(`partition ${partition} of ${this.name} does not exist`);
    return log;
  }

  /** Drops events every group has consumed. */
  trim(partition: number): void {
    const log = this.logOf(partition);
    let low = log.base + log.events.length;
    for (const group of this.groups.values()) low = Math.min(low, group.nextOffset(partition));
    const consumed = low - log.base;
    if (consumed >= TRIM_BATCH || (consumed > 0 && consumed === log.events.length)) {
      log.events.splice(0, consumed);
      log.base = low;
    }
  }
}

export interface MemberOptions {
  handler: EventHandler;
  /** When set, the events waiting on a partition go to it together (one statement for many). */
  batchHandler?: BatchHandler;
  /** How long events gather on a partition before a batch is handed over (the bus's `batchWaitMs` unless the subscription set its own). */
  batchWaitMs: () => number;
  maxAttempts: number;
  settings: BusSettings;
}

export class MemoryMember {
  busy = false;
  closed = false;
  /** Left the group because a handler ran past the reclaim idle time; rejoins when it returns. */
  stalled = false;
  current: Promise<void> = Promise.resolve();
  cursor = 0;
  constructor(readonly options: MemberOptions) {}
}

interface Inflight {
  member: MemoryMember;
  token: object;
}

interface GroupPartition {
  next: number;
  /** Deliveries of the event at `next` so far. */
  deliveries: number;
  owner: MemoryMember | undefined;
  inflight: Inflight | undefined;
  /** Set while a failed event waits for its retry delay; cleared by the timer (not by the wall clock). */
  retryTimer: NodeJS.Timeout | undefined;
  /** After a batch failed, its events go one at a time (each retries and dead-letters alone) up to here. */
  singleUntil: number;
  /** Events gathering for a batch: `waiting` until the gather timer fires, then `ready` to hand over. */
  gathering: "idle" | "waiting" | "ready";
}

type Outcome = { ok: true } | { ok: false; error: unknown };

/**
 * A consumer group on one topic: partitions are spread over the members (partition i goes to member
 * i mod n); each partition is handled one event at a time, so one key's events stay in order.
 */
export class MemoryGroup {
  private members: MemoryMember[] = [];
  private pumpScheduled = false;
  private readonly parts: GroupPartition[];

  constructor(
    private readonly topic: MemoryTopic,
    readonly name: string,
    private readonly broker: MemoryBroker,
    private readonly log: Logger,
  ) {
    this.parts = topic.logs.map((log) => ({
      next: log.base,
      deliveries: 0,
      owner: undefined,
      inflight: undefined,
      retryTimer: undefined,
      singleUntil: 0,
      gathering: "idle",
    }));
  }

  /** Every partition handled to its end, nothing running and no retry waiting. */
  caughtUp(): boolean {
    return this.parts.every(
      (part, i) => !part.inflight && !part.retryTimer && part.next >= this.topic.logOf(i).base + this.topic.logOf(i).events.length,
    );
  }

  nextOffset(partition: number): number {
    return this.partOf(partition).next;
  }

  join(member: MemoryMember): void {
    this.members.push(member);
    this.rebalance();
    this.pump();
  }

  /** Removes a member; its running handler, if any, still finishes and counts. */
  leave(member: MemoryMember): void {
    this.members = this.members.filter((m) => m !== member);
    this.rebalance();
    this.pump();
  }

  /** Gives up on a member's running handler: its event goes to whoever owns the partition next. */
  abandon(member: MemoryMember): void {
    for (const part of this.parts) {
      if (part.inflight?.member === member) part.inflight = undefined;
    }
    this.pump();
  }

  /** Delivers on a later turn, so a publisher never runs consumer code inside its own call. */
  schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  pump(): void {
    for (const member of this.members) {
      if (member.busy || member.closed || member.stalled) continue;
      const partition = this.readyPartitionOf(member);
      if (partition !== undefined) this.deliver(member, partition);
    }
  }

  private rebalance(): void {
    this.parts.forEach((part, i) => {
      part.owner = this.members.length > 0 ? this.members[i % this.members.length] : undefined;
    });
  }

  private readyPartitionOf(member: MemoryMember): number | undefined {
    const count = this.parts.length;
    for (let step = 0; step < count; step++) {
      const i = (member.cursor + step) % count;
      const part = this.partOf(i);
      if (part.owner !== member || part.inflight || part.retryTimer) continue;
      const log = this.topic.logOf(i);
      if (part.next < log.base) {
        this.log.warn({ topic: this.topic.name, group: this.name, lost: log.base - part.next }, "bus.retention.skipped");
        part.next = log.base;
        part.deliveries = 0;
      }
      if (part.next < log.base + log.events.length) {
        member.cursor = (i + 1) % count;
        return i;
      }
    }
    return undefined;
  }

  private deliver(member: MemoryMember, partition: number): void {
    const part = this.partOf(partition);
    const log = this.topic.logOf(partition);
    const waiting = log.base + log.events.length - part.next;
    const { batchHandler } = member.options;
    const batching = batchHandler !== undefined && part.deliveries === 0 && part.next >= part.singleUntil;
    const gatherMs = batching ? member.options.batchWaitMs() : 0;
    if (batching && gatherMs > 0 && waiting < MAX_BATCH) {
      // Let the events of the next moments join this one: one statement for many, as with Redis.
      if (part.gathering === "idle") {
        part.gathering = "waiting";
        setTimeout(() => {
          part.gathering = "ready";
          this.pump();
        }, gatherMs).unref();
      }
      if (part.gathering === "waiting") return;
    }
    part.gathering = "idle";
    if (batchHandler && batching && waiting > 1) {
      this.deliverBatch(member, partition, batchHandler, Math.min(waiting, MAX_BATCH));
      return;
    }
    const envelope = this.topic.logOf(partition).events[part.next - this.topic.logOf(partition).base];
    if (!envelope) return;
    part.deliveries += 1;
    const attempt = part.deliveries;
    const { maxAttempts, settings, handler } = member.options;
    if (attempt > maxAttempts) {
      // Handlers crashed on it maxAttempts times already: a poison event.
      this.deadLetter(envelope, attempt - 1, new Error("handler stalled on every delivery"));
      this.advance(partition);
      this.pump();
      return;
    }
    const token = {};
    const offset = part.next;
    part.inflight = { member, token };
    member.busy = true;
    const stall = setTimeout(() => this.stall(member), settings.reclaimIdleMs);
    stall.unref();
    const event = incomingOf({ ...envelope, payload: payloadCopy(envelope.payload) }, attempt);
    const run = (async (): Promise<Outcome> => {
      try {
        await handler(event);
        return { ok: true };
      } catch (error) {
        return { ok: false, error };
      }
    })();
    member.current = run.then((outcome) => {
      clearTimeout(stall);
      member.busy = false;
      this.settle(member, partition, { token, offset }, () => this.record(partition, member, envelope, attempt, outcome));
    });
  }

  /**
   * Hands the partition's next `count` events to the batch handler at once. When it throws, nothing
   * advances and the same events go again one at a time through the event handler, so one bad event
   * retries and dead-letters alone, as the port promises.
   */
  private deliverBatch(member: MemoryMember, partition: number, batchHandler: BatchHandler, count: number): void {
    const part = this.partOf(partition);
    const log = this.topic.logOf(partition);
    const first = part.next - log.base;
    const envelopes = log.events.slice(first, first + count);
    const token = {};
    const offset = part.next;
    part.inflight = { member, token };
    member.busy = true;
    const stall = setTimeout(() => this.stall(member), member.options.settings.reclaimIdleMs);
    stall.unref();
    const events = envelopes.map((e) => incomingOf({ ...e, payload: payloadCopy(e.payload) }, 1));
    const run = batchHandler(events).then(
      () => true,
      () => false,
    );
    member.current = run.then((ok) => {
      clearTimeout(stall);
      member.busy = false;
      this.settle(member, partition, { token, offset }, () => {
        part.inflight = undefined;
        if (ok) this.advance(partition, envelopes.length);
        else part.singleUntil = offset + envelopes.length;
      });
    });
  }

  /** A delivery ended: `record` its outcome unless another delivery took it over; then go on. */
  private settle(member: MemoryMember, partition: number, delivery: { token: object; offset: number }, record: () => void): void {
    const part = this.partOf(partition);
    const rejoin = member.stalled && !member.closed;
    member.stalled = false;
    // Abandoned (stalled, or closed too slowly) counts only if another delivery of the event began.
    const current = part.inflight?.token === delivery.token;
    const untouched = part.inflight === undefined && part.next === delivery.offset;
    if (current || untouched) record();
    if (rejoin) this.join(member);
    else this.pump();
  }

  private record(partition: number, member: MemoryMember, envelope: Envelope, attempt: number, outcome: Outcome): void {
    const part = this.partOf(partition);
    part.inflight = undefined;
    const { maxAttempts, settings } = member.options;
    if (outcome.ok) {
      this.advance(partition);
      return;
    }
    const outage = isOutage(outcome.error);
    if (attempt >= maxAttempts && !outage) {
      this.deadLetter(envelope, attempt, outcome.error);
      this.advance(partition);
    } else {
      if (outage) part.deliveries = Math.min(part.deliveries, maxAttempts - 1);
      const delay = retryDelay(settings, attempt);
      this.log.warn(
        { topic: this.topic.name, group: this.name, eventId: envelope.id, attempt, err: outcome.error },
        "bus.handler.failed",
      );
      if (part.retryTimer) clearTimeout(part.retryTimer);
      part.retryTimer = setTimeout(() => {
        part.retryTimer = undefined;
        this.pump();
      }, delay);
      part.retryTimer.unref();
    }
  }

  private stall(member: MemoryMember): void {
    if (!member.busy || member.closed || !this.members.includes(member)) return;
    this.log.warn(
      { topic: this.topic.name, group: this.name, reclaimIdleMs: member.options.settings.reclaimIdleMs },
      "bus.consumer.stalled",
    );
    member.stalled = true;
    this.members = this.members.filter((m) => m !== member);
    this.rebalance();
    this.abandon(member);
  }

  private advance(partition: number, count = 1): void {
    const part = this.partOf(partition);
    part.next += count;
    part.deliveries = 0;
    this.topic.trim(partition);
  }

  private deadLetter(envelope: Envelope, attempts: number, reason: unknown): void {
    this.log.warn(
      { topic: this.topic.name, group: this.name, eventId: envelope.id, attempts, err: reason },
      "bus.event.dead_lettered",
    );
    this.broker.append(deadLetterOf(envelope, attempts, reason), this.topic.logs.length);
  }

  private partOf(partition: number): GroupPartition {
    const part = this.parts[partition];
    if (!part) throw new Error(`partition ${partition} of ${this.topic.name} does not exist`);
    return part;
  }
}
