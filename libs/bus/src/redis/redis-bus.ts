import Redis, { type RedisOptions } from "ioredis";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { withDeadline } from "../deadline";
import type { BrokerSubscribeOptions } from "../consumer-groups";
import { exitOnFatal } from "../failure";
import { LiveSubscriptions } from "../live-subscriptions";
import { envelopeOf, type Envelope } from "../envelope";
import { Outbox } from "../outbox";
import { partitionOf } from "../partition";
import type { BusConfig, EventBus, OutgoingEvent, Subscription } from "../port";
import { maxAttemptsOf, settingsOf, subscriptionBatchWait, type BusSettings } from "../settings";
import { PARTITIONS } from "./group-scripts";
import { checkPersistence } from "./persistence";
import { ready } from "./ready";
import { redisFailureOf } from "./redis-errors";
import { redisKeys } from "./redis-keys";
import { RedisSubscription } from "./redis-subscription";
import { fieldsOf } from "./stream-codec";

/**
 * Retention per partition stream (approximate trimming on every add). Like a Kafka retention limit:
 * a group lagging further behind than this loses the oldest events.
 */
const MAX_STREAM_LENGTH = 1_000_000;

/** The Redis Streams bus: for installs without Kafka and for multi-process tests. */
export async function createRedisBus(config: BusConfig & { redisUrl: string }): Promise<EventBus> {
  const settings = settingsOf(config);
  const bus = new RedisBus(config.redisUrl, settings, config.log, config.onFatal ?? exitOnFatal);
  await bus.open();
  return bus;
}

class RedisBus implements EventBus {
  private readonly client: Redis;
  private outbox: Outbox | undefined;
  private readonly partitions = new Map<string, Promise<number>>();
  private readonly subscriptions = new LiveSubscriptions<RedisSubscription>();
  private readonly readers = new Set<Redis>();
  private closed = false;
  private fatalReported = false;

  constructor(
    private readonly url: string,
    private readonly settings: BusSettings,
    private readonly log: Logger,
    private readonly onFatal: (err: Error) => void,
  ) {
    this.client = this.connect("bus", { commandTimeout: settings.publishTimeoutMs });
  }

  async open(): Promise<void> {
    // Not fatal when Redis is away at start: publishes go to the outbox until it is back.
    const connected = ready(this.client);
    const persistence = connected.then(() => (this.closed ? undefined : checkPersistence(this.client, this.log))).catch(() => undefined);
    // Checked before the first event when Redis answers at once (the log line comes first), later otherwise.
    await withDeadline(persistence, this.settings.publishTimeoutMs);
    this.outbox = await Outbox.forBroker(this.settings, this.log, {
      send: (envelope) => this.send(envelope),
      failureOf: redisFailureOf,
      onBroken: (err) => this.fatal(err),
    });
  }

  async publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) throw closedError();
    await this.publishEnvelope(envelopeOf(event));
  }

  async subscribe(opts: BrokerSubscribeOptions): Promise<Subscription> {
    if (this.closed) throw closedError();
    const subscription = new RedisSubscription(
      {
        client: this.client,
        newReader: () => this.newReader(),
        settings: this.settings,
        log: this.log,
        partitionsOf: (topic) => this.partitionsOf(topic),
        publishEnvelope: (envelope) => this.publishEnvelope(envelope),
        fatal: (err) => this.fatal(err),
      },
      {
        topic: opts.topic,
        group: opts.group,
        formerGroup: opts.formerGroup,
        handler: opts.handler,
        batchHandler: opts.batchHandler,
        batchWaitMs: subscriptionBatchWait(opts.batchWaitMs, this.settings.batchWaitMs),
        maxAttempts: maxAttemptsOf(opts.maxAttempts),
      },
    );
    return this.subscriptions.start(subscription);
  }

  /** The broker keeps what its consumers have not taken yet: nothing to wait for. */
  async drain(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.subscriptions.closeAll();
    await this.outbox?.close();
    for (const reader of this.readers) reader.disconnect();
    this.client.disconnect();
  }

  /** Once per bus: what met it is logged already (bus.consumer.stopped, bus.outbox.stopped). */
  private fatal(err: unknown): void {
    if (this.fatalReported || this.closed) return;
    this.fatalReported = true;
    this.onFatal(err instanceof Error ? err : new Error(String(err)));
  }

  private publishEnvelope(envelope: Envelope): Promise<void> {
    if (!this.outbox) throw closedError();
    return this.outbox.publish(envelope);
  }

  private async send(envelope: Envelope): Promise<void> {
    const partitions = await this.partitionsOf(envelope.topic);
    const stream = redisKeys.stream(envelope.topic, partitionOf(envelope.key, partitions));
    await this.client.call("XADD", stream, "MAXLEN", "~", MAX_STREAM_LENGTH, "*", ...fieldsOf(envelope, this.settings.redisEntryLayout));
  }

  /** The topic's partition count: the first client to use a topic records it, every other follows. */
  private partitionsOf(topic: string): Promise<number> {
    let known = this.partitions.get(topic);
    if (!known) {
      known = this.client.eval(PARTITIONS, 1, redisKeys.partitions(topic), this.settings.partitions).then((value) => {
        const count = Number(value);
        if (!Number.isInteger(count) || count < 1) throw new Error(`bad partition count for ${topic}: ${String(value)}`);
        if (count !== this.settings.partitions) {
          this.log.warn({ topic, recorded: count, configured: this.settings.partitions }, "bus.redis.partitions_differ");
        }
        return count;
      });
      known.catch(() => this.partitions.delete(topic));
      this.partitions.set(topic, known);
    }
    return known;
  }

  private newReader(): Redis {
    // Blocking reads hold their connection: one per subscription, never shared with commands.
    // The client-side timeout of a blocking read is a safety net against a silently dead connection;
    // the grace is wide so a busy machine never cuts a read whose reply is on its way.
    const reader = this.connect("bus-reader", {
      blockingTimeout: this.settings.publishTimeoutMs,
      blockingTimeoutGrace: this.settings.publishTimeoutMs,
    });
    this.readers.add(reader);
    reader.once("end", () => this.readers.delete(reader));
    return reader;
  }

  private connect(role: string, extra: RedisOptions): Redis {
    const client = new Redis(this.url, {
      protocol: 2,
      connectionName: `${this.settings.clientId}-${role}`,
      // Fail fast while disconnected: a publish goes to the outbox instead of waiting in a queue,
      // and nothing is sent twice behind our back after a reconnect.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
      // After a failed connection ioredis waits this long for a close that never comes: keep shutdown quick.
      disconnectTimeout: 500,
      ...extra,
    });
    let reported = false;
    client.on("error", (err: Error) => {
      if (!reported && !this.closed) this.log.warn({ err, role }, "bus.redis.connection_failed");
      reported = true;
    });
    client.on("ready", () => {
      if (reported) this.log.info({ role }, "bus.redis.connected");
      reported = false;
    });
    return client;
  }
}

function closedError(): DomainError {
  return new DomainError("unavailable", "the event bus is closed");
}
