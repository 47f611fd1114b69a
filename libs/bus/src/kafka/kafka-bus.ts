import { Kafka, logLevel, Partitioners, type Consumer, type EachBatchPayload, type IHeaders, type Producer } from "kafkajs";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import type { BrokerSubscribeOptions } from "../consumer-groups";
import { within, withDeadline } from "../deadline";
import { exitOnFatal, isOutage, isProgrammingError } from "../failure";
import { LiveSubscriptions } from "../live-subscriptions";
import { deadLetterOf, envelopeOf, HEADER_EVENT_ID, HEADER_EVENT_TYPE, incomingOf, payloadBytes, payloadCopy, type Envelope } from "../envelope";
import { Outbox, type SendFailure } from "../outbox";
import type { BusConfig, EventBus, OutgoingEvent, SubscribeOptions, Subscription } from "../port";
import { maxAttemptsOf, retryDelay, settingsOf, type BusSettings } from "../settings";
import { Waker } from "../waker";
import { BusMisconfiguredError, classifyKafkaError, misconfiguration } from "./kafka-errors";
import { pinoLogCreator } from "./kafka-log";

// Brokers refuse session timeouts below group.min.session.timeout.ms, 6 s by default.
const MIN_SESSION_TIMEOUT_MS = 6_000;
/**
 * How long a join may take beyond the session timeout: a member that joins right after another was
 * killed waits until the broker drops the dead one (its session timeout), then for the live members
 * to rejoin. A deadline below that would stop a replacement that was merely waiting its turn.
 */
const JOIN_GRACE_MS = 30_000;
/** Most consecutive events of one partition handed to a batch handler at once (and committed at once). */
const MAX_BATCH = 256;

/**
 * The Kafka bus (kafkajs), the production engine. Idempotent producer waiting for all in-sync
 * replicas, one request in flight (so retries cannot reorder a partition); consumer groups with
 * offsets committed after the handler; bounded retries then `<topic>.dlq`. Events keyed by `key`,
 * so one key stays in one partition, in order. It never creates topics: the deployment declares
 * them (`declareKafkaTopics`), and a missing topic, a refused ACL or an unsupported broker stops
 * the service (see `BusConfig.onFatal`) instead of being retried as an outage.
 */
export async function createKafkaBus(config: BusConfig & { kafkaBrokers: string[] }): Promise<EventBus> {
  const settings = settingsOf(config);
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: config.kafkaBrokers,
    connectionTimeout: Math.min(settings.publishTimeoutMs, 3_000),
    requestTimeout: Math.max(settings.publishTimeoutMs, 1_000),
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(config.log),
  });
  const bus = new KafkaBus(kafka, settings, config.log, config.onFatal ?? exitOnFatal);
  await bus.open();
  return bus;
}

class KafkaBus implements EventBus {
  private readonly producer: Producer;
  private connected: Promise<void> | undefined;
  private outbox: Outbox | undefined;
  private fatalReported = false;
  /** A misconfiguration met while publishes were still putting events in the outbox. */
  private misconfigured: BusMisconfiguredError | undefined;
  private publishing = 0;
  private readonly subscriptions = new LiveSubscriptions<KafkaSubscription>();
  private closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly settings: BusSettings,
    private readonly log: Logger,
    private readonly onFatal: (err: Error) => void,
  ) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => (this.connected = undefined));
  }

  async open(): Promise<void> {
    // Not fatal when Kafka is away at start: publishes go to the outbox until it is back. A broker
    // that refuses the client (credentials, API version) is: the service does not start.
    let failure: unknown;
    await withDeadline(this.connect().catch((err: unknown) => void (failure = err)), this.settings.publishTimeoutMs);
    const refused = failure === undefined ? undefined : misconfiguration(failure, {});
    if (refused) {
      await withDeadline(this.producer.disconnect(), this.settings.closeTimeoutMs);
      throw refused;
    }
    this.outbox = await Outbox.forBroker(this.settings, this.log, {
      send: (envelope) => this.send(envelope),
      failureOf: (err) => this.failureOf(err),
      onBroken: (err) => this.fatal(err instanceof Error ? err : new Error(String(err))),
    });
  }

  async publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) throw closedError();
    await this.publishEnvelope(envelopeOf(event));
  }

  async subscribe(opts: BrokerSubscribeOptions): Promise<Subscription> {
    if (this.closed) throw closedError();
    const subscription = new KafkaSubscription(this.kafka, this.settings, this.log, {
      topic: opts.topic,
      group: opts.group,
      formerGroup: opts.formerGroup,
      handler: opts.handler,
      batchHandler: opts.batchHandler,
      maxAttempts: maxAttemptsOf(opts.maxAttempts),
      fatal: (err) => this.fatal(err),
      publishEnvelope: (envelope) => this.publishEnvelope(envelope),
    });
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
    await withDeadline(this.producer.disconnect(), this.settings.closeTimeoutMs);
  }

  private async publishEnvelope(envelope: Envelope): Promise<void> {
    if (!this.outbox) throw closedError();
    this.publishing += 1;
    try {
      await this.outbox.publish(envelope);
    } finally {
      this.publishing -= 1;
    }
    // Only now: the event that met the misconfiguration is safe in the outbox.
    if (this.misconfigured && this.publishing === 0) this.fatal(this.misconfigured);
  }

  private async send(envelope: Envelope): Promise<void> {
    try {
      await this.connect();
      await this.producer.send({
        topic: envelope.topic,
        acks: -1,
        timeout: this.settings.publishTimeoutMs,
        messages: [{ key: envelope.key, value: payloadBytes(envelope), headers: envelope.headers }],
      });
    } catch (err) {
      throw misconfiguration(err, { topic: envelope.topic }) ?? err;
    }
  }

  /**
   * What the outbox does with an event the broker did not take. An outage: keeps it and retries. A
   * misconfiguration: keeps it too (it is sent once the deployment is fixed), but the service stops.
   * The broker refusing this one event: sets it aside. An error from code: keeps it and stops.
   */
  private failureOf(err: unknown): SendFailure {
    if (err instanceof BusMisconfiguredError) {
      this.misconfigured ??= err;
      if (this.publishing === 0) this.fatal(err);
      return "unreachable";
    }
    const kind = classifyKafkaError(err).kind;
    return kind === "refused" ? "refused" : kind === "unexpected" ? "broken" : "unreachable";
  }

  /** Once per bus; a consumer that stopped or an outbox that stopped logged its line already. */
  private fatal(err: Error): void {
    if (this.fatalReported || this.closed) return;
    this.fatalReported = true;
    if (err instanceof BusMisconfiguredError) {
      this.log.fatal({ err, reason: err.reason, ...err.where, fix: err.hint }, "bus.kafka.misconfigured");
    }
    this.onFatal(err);
  }

  private connect(): Promise<void> {
    if (!this.connected) {
      const connecting = this.producer.connect();
      connecting.catch(() => {
        if (this.connected === connecting) this.connected = undefined;
      });
      this.connected = connecting;
    }
    return this.connected;
  }
}

interface KafkaSubscriptionOptions {
  topic: string;
  group: string;
  /** The group this one replaces: a new group starts at its committed offsets on this topic. */
  formerGroup?: string;
  handler: SubscribeOptions["handler"];
  batchHandler?: SubscribeOptions["batchHandler"];
  maxAttempts: number;
  /** Reports a consumer that stopped for good after the subscription started (stops the service). */
  fatal(err: Error): void;
  publishEnvelope(envelope: Envelope): Promise<void>;
}

class KafkaSubscription {
  private readonly consumer: Consumer;
  private readonly joinTimeoutMs: number;
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly waker = new Waker();
  private readonly log: Logger;

  constructor(
    private readonly kafka: Kafka,
    private readonly settings: BusSettings,
    log: Logger,
    private readonly opts: KafkaSubscriptionOptions,
  ) {
    const sessionTimeout = Math.max(MIN_SESSION_TIMEOUT_MS, settings.reclaimIdleMs);
    this.joinTimeoutMs = sessionTimeout + JOIN_GRACE_MS;
    this.consumer = kafka.consumer({
      groupId: opts.group,
      // A handler stuck past the session timeout stops heartbeats: the broker moves its partitions on.
      sessionTimeout,
      heartbeatInterval: Math.floor(sessionTimeout / 3),
      allowAutoTopicCreation: false,
      retry: {
        retries: 5,
        initialRetryTime: 100,
        maxRetryTime: 2_000,
        // kafkajs restarts a crashed consumer, with backoff, on errors a retry may fix (a broker
        // away, a rebalance), for as long as they last. A misconfiguration (an undeclared topic
        // included) or an error from code is not one of them: the CRASH listener stops the service.
        restartOnFailure: async (err) => !misconfiguration(err, {}) && !isProgrammingError(err),
      },
    });
    this.log = log.child({ topic: opts.topic, group: opts.group });
  }

  /**
   * Connects, joins the group (waiting for the first assignment, at most the session timeout plus
   * `JOIN_GRACE_MS`) and
   * starts consuming; rejects when it could not join.
   */
  async start(): Promise<void> {
    const where = { topic: this.opts.topic, group: this.opts.group };
    let started = false;
    let stopped!: (err: unknown) => void;
    const crashed = new Promise<never>((_, reject) => (stopped = reject));
    crashed.catch(() => undefined);
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      if (payload.restart || this.closing) return;
      const err = misconfiguration(payload.error, where);
      if (!started) return stopped(err ?? payload.error);
      // kafkajs will not restart it: a service without this consumer must not stay up and ready.
      if (!err) this.log.fatal({ err: payload.error }, "bus.consumer.stopped");
      this.opts.fatal(err ?? payload.error);
    });
    try {
      await this.adoptFormerOffsets();
      await this.consumer.connect();
      // From the beginning for a group with no position yet: events published before it first
      // subscribed are not lost (a renamed group starts at its predecessor's offsets instead).
      await this.consumer.subscribe({ topics: [this.opts.topic], fromBeginning: true });
      const joined = new Promise<void>((resolve) => this.consumer.on(this.consumer.events.GROUP_JOIN, () => resolve()));
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => this.onBatch(payload),
      });
      // A consumer that cannot join (group ACL) crashes instead: subscribe() rejects with the reason.
      await Promise.race([
        within(joined, this.joinTimeoutMs, () => new Error(`did not join consumer group ${this.opts.group} within ${this.joinTimeoutMs} ms`)),
        crashed,
      ]);
      started = true;
    } catch (err) {
      await withDeadline(this.consumer.disconnect(), this.settings.closeTimeoutMs);
      throw misconfiguration(err, where) ?? err;
    }
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.waker.wake();
      await withDeadline(this.consumer.disconnect(), this.settings.closeTimeoutMs);
    })();
    return this.closed;
  }

  /**
   * A group with no committed offset on its topic takes those of the group it replaces, before it
   * first joins: a renamed group goes on where its predecessor stood, neither replaying the topic
   * nor skipping what was published meanwhile. Partitions the predecessor never committed start
   * from the beginning, like a new group's.
   */
  private async adoptFormerOffsets(): Promise<void> {
    const { formerGroup, group, topic } = this.opts;
    if (!formerGroup) return;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const committed = (groupId: string) =>
        admin.fetchOffsets({ groupId, topics: [topic] }).then((topics) => topics.flatMap((t) => t.partitions).filter((p) => Number(p.offset) >= 0));
      if ((await committed(group)).length > 0) return;
      const partitions = (await committed(formerGroup)).map(({ partition, offset }) => ({ partition, offset }));
      if (partitions.length === 0) return;
      try {
        await admin.setOffsets({ groupId: group, topic, partitions });
      } catch (err) {
        // Only an empty group takes offsets: another replica adopted them and joined first.
        if ((await committed(group)).length > 0) return;
        throw err;
      }
      this.log.info({ from: formerGroup, partitions: partitions.length }, "bus.consumer.group_migrated");
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * One fetch of one partition: the batch handler takes runs of up to `MAX_BATCH` events (when it
   * throws, those events go through `handler` alone, each with its own retries and dead-lettering);
   * offsets are committed once per run, after it was handled: at least once, one commit for many.
   */
  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const envelopes = batch.messages.map((m) => envelopeOfMessage(batch.topic, batch.partition, m.offset, m.key, m.value, m.headers));
    const offsets = batch.messages.map((m) => m.offset);
    for (let from = 0; from < envelopes.length; from += MAX_BATCH) {
      // Stopping or rebalanced away: what is left is delivered again (here, or to the new owner).
      if (this.closing || !payload.isRunning() || payload.isStale()) return;
      const run = envelopes.slice(from, from + MAX_BATCH);
      let handled = 0;
      if (this.opts.batchHandler && run.length > 1 && (await this.handledTogether(run))) handled = run.length;
      for (; handled < run.length; handled++) {
        if (!(await this.handleAlone(run[handled]!, payload))) break;
      }
      if (handled === 0) return;
      const last = offsets[from + handled - 1]!;
      payload.resolveOffset(last);
      // Through the batch, not consumer.commitOffsets: that one wraps a rebalance (REBALANCE_IN_PROGRESS,
      // ILLEGAL_GENERATION) in a non-retriable error that crashes the consumer for good; from here the
      // runner sees it, rejoins, and the uncommitted rest is delivered again.
      await payload.commitOffsetsIfNecessary({
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(last) + 1n).toString() }] }],
      });
      if (handled < run.length) return;
      await payload.heartbeat();
    }
  }

  private async handledTogether(run: Envelope[]): Promise<boolean> {
    try {
      await this.opts.batchHandler!(run.map((e) => incomingOf(e, 1)));
      return true;
    } catch (err) {
      this.log.warn({ size: run.length, firstEventId: run[0]?.id, err }, "bus.batch_handler.failed");
      return false;
    }
  }

  /** Handles one event with retries, then dead-letters it; false when stopped before it was done. */
  private async handleAlone(envelope: Envelope, payload: EachBatchPayload): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      // Leaves the offset uncommitted: the event is delivered again after the shutdown.
      if (this.closing) return false;
      try {
        await this.opts.handler(incomingOf(envelope, attempt));
        return true;
      } catch (err) {
        const outage = isOutage(err);
        if (attempt >= this.opts.maxAttempts && !outage) {
          await this.opts.publishEnvelope(deadLetterOf(envelope, attempt, err));
          this.log.warn({ eventId: envelope.id, attempts: attempt, err }, "bus.event.dead_lettered");
          return true;
        }
        this.log.warn({ eventId: envelope.id, attempt, err }, "bus.handler.failed");
        await this.waker.sleep(retryDelay(this.settings, attempt));
        await payload.heartbeat();
        // An outage does not use the event up: the next attempt is at most maxAttempts again.
        if (outage) attempt = Math.min(attempt, this.opts.maxAttempts - 1);
      }
    }
  }
}

function envelopeOfMessage(
  topic: string,
  partition: number,
  offset: string,
  key: Buffer | null,
  value: Buffer | null,
  raw: IHeaders | undefined,
): Envelope {
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(raw ?? {})) {
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined) headers[name] = first.toString();
  }
  return {
    // A producer outside this library may omit the id: the log position is unique too.
    id: headers[HEADER_EVENT_ID] ?? `${topic}-${partition}-${offset}`,
    topic,
    key: key?.toString("utf8") ?? "",
    type: headers[HEADER_EVENT_TYPE] ?? "",
    payload: value ? payloadCopy(value) : new Uint8Array(),
    headers,
  };
}

function closedError(): DomainError {
  return new DomainError("unavailable", "the event bus is closed");
}
