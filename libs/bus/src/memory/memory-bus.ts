import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { envelopeOf } from "../envelope";
import type { BusConfig, EventBus, OutgoingEvent, SubscribeOptions, Subscription } from "../port";
import { maxAttemptsOf, settingsOf, subscriptionBatchWait, type BusSettings } from "../settings";
import { withDeadline } from "../deadline";
import { MemoryBroker, MemoryGroup, MemoryMember } from "./memory-broker";

// Shared by every memory bus of the process, the way clients share one broker.
const processBroker = new MemoryBroker();
const DRAIN_POLL_MS = 10;

/** The in-process bus for the one-process default: same guarantees as the others, nothing survives a restart. */
export function createMemoryBus(config: BusConfig): EventBus {
  return new MemoryBus(processBroker, settingsOf(config), config.log);
}

class MemoryBus implements EventBus {
  private closed = false;
  private readonly subscriptions = new Set<MemorySubscription>();

  constructor(
    private readonly broker: MemoryBroker,
    private readonly settings: BusSettings,
    private readonly log: Logger,
  ) {}

  async publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) throw closedError();
    this.broker.append(envelopeOf(event), this.settings.partitions);
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    if (this.closed) throw closedError();
    const maxAttempts = maxAttemptsOf(opts.maxAttempts);
    const topic = this.broker.topic(opts.topic, this.settings.partitions);
    const group = topic.group(opts.group, () => new MemoryGroup(topic, opts.group, this.broker, this.log));
    const member = new MemoryMember({
      handler: opts.handler,
      batchHandler: opts.batchHandler,
      batchWaitMs: subscriptionBatchWait(opts.batchWaitMs, this.settings.batchWaitMs),
      maxAttempts,
      settings: this.settings,
    });
    const subscription = new MemorySubscription(group, member, this.settings, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    group.join(member);
    return subscription;
  }

  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    // Shutdown only: polling keeps the delivery path free of drain bookkeeping.
    while (![...this.subscriptions].every((s) => s.caughtUp())) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
  }
}

class MemorySubscription implements Subscription {
  private closing: Promise<void> | undefined;

  constructor(
    private readonly group: MemoryGroup,
    private readonly member: MemoryMember,
    private readonly settings: BusSettings,
    private readonly onClosed: () => void,
  ) {}

  /** Whether the group has handled everything on the topic so far (a closed one has nothing left to do). */
  caughtUp(): boolean {
    return this.closing !== undefined || this.group.caughtUp();
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    this.member.closed = true;
    this.group.leave(this.member);
    const finished = await withDeadline(this.member.current, this.settings.closeTimeoutMs);
    if (!finished) this.group.abandon(this.member);
    this.onClosed();
  }
}

function closedError(): DomainError {
  return new DomainError("unavailable", "the event bus is closed");
}
