import { Kafka, logLevel, Partitioners, type Consumer, type EachMessagePayload, type IHeaders, type Producer } from "kafkajs";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { withDeadline } from "../deadline";
import { LiveSubscriptions } from "../live-subscriptions";
import { deadLetterOf, envelopeOf, HEADER_EVENT_ID, HEADER_EVENT_TYPE, incomingOf, type Envelope } from "../envelope";
import { Outbox } from "../outbox";
import type { BusConfig, EventBus, OutgoingEvent, SubscribeOptions, Subscription } from "../port";
import { maxAttemptsOf, retryDelay, settingsOf, type BusSettings } from "../settings";
import { Waker } from "../waker";
import { BusMisconfiguredError, classifyKafkaError, misconfiguration } from "./kafka-errors";
import { pinoLogCreator } from "./kafka-log";

// Brokers refuse session timeouts below group.min.session.timeout.ms, 6 s by default.
const MIN_SESSION_TIMEOUT_MS = 6_000;
const JOIN_TIMEOUT_MS = 30_000;

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
    private readonly onFatal: (err: BusMisconfiguredError) => void,
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
      unreachable: (err) => this.keepForLater(err),
    });
  }

  async publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) throw closedError();
    await this.publishEnvelope(envelopeOf(event));
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    if (this.closed) throw closedError();
    const subscription = new KafkaSubscription(this.kafka, this.settings, this.log, {
      topic: opts.topic,
      group: opts.group,
      handler: opts.handler,
      maxAttempts: maxAttemptsOf(opts.maxAttempts),
      fatal: (err) => this.fatal(err),
      publishEnvelope: (envelope) => this.publishEnvelope(envelope),
    });
    return this.subscriptions.start(subscription);
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
        messages: [{ key: envelope.key, value: Buffer.from(envelope.payload), headers: envelope.headers }],
      });
    } catch (err) {
      throw misconfiguration(err, { topic: envelope.topic }) ?? err;
    }
  }

  /**
   * Whether the outbox keeps an event the broker did not take. An outage: yes, and retries. A
   * misconfiguration: yes too (it is sent once the deployment is fixed), but the service stops.
   * The broker refusing this one event: no, it is set aside.
   */
  private keepForLater(err: unknown): boolean {
    if (err instanceof BusMisconfiguredError) {
      this.misconfigured ??= err;
      if (this.publishing === 0) this.fatal(err);
      return true;
    }
    return classifyKafkaError(err).kind === "unreachable";
  }

  private fatal(err: BusMisconfiguredError): void {
    if (this.fatalReported) return;
    this.fatalReported = true;
    this.log.fatal({ err, reason: err.reason, ...err.where, fix: err.hint }, "bus.kafka.misconfigured");
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
  handler: SubscribeOptions["handler"];
  maxAttempts: number;
  /** Reports a misconfiguration found after the subscription started (stops the service). */
  fatal(err: BusMisconfiguredError): void;
  publishEnvelope(envelope: Envelope): Promise<void>;
}

class KafkaSubscription {
  private readonly consumer: Consumer;
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly waker = new Waker();
  private readonly log: Logger;

  constructor(
    kafka: Kafka,
    private readonly settings: BusSettings,
    log: Logger,
    private readonly opts: KafkaSubscriptionOptions,
  ) {
    const sessionTimeout = Math.max(MIN_SESSION_TIMEOUT_MS, settings.reclaimIdleMs);
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
        // kafkajs restarts a crashed consumer on retriable errors, an undeclared topic included:
        // a misconfiguration stops it instead (and the CRASH listener reports it).
        restartOnFailure: async (err) => !misconfiguration(err, {}),
      },
    });
    this.log = log.child({ topic: opts.topic, group: opts.group });
  }

  /** Connects, joins the group (waiting for the first assignment) and starts consuming. */
  async start(): Promise<void> {
    const where = { topic: this.opts.topic, group: this.opts.group };
    let started = false;
    let stopped!: (err: unknown) => void;
    const crashed = new Promise<never>((_, reject) => (stopped = reject));
    crashed.catch(() => undefined);
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      if (payload.restart || this.closing) return;
      const err = misconfiguration(payload.error, where);
      if (!started) stopped(err ?? payload.error);
      else if (err) this.opts.fatal(err);
      else this.log.error({ err: payload.error }, "bus.kafka.consumer_stopped");
    });
    try {
      await this.consumer.connect();
      // From the beginning for a new group: events published before it first subscribed are not lost.
      await this.consumer.subscribe({ topics: [this.opts.topic], fromBeginning: true });
      const joined = new Promise<void>((resolve) => this.consumer.on(this.consumer.events.GROUP_JOIN, () => resolve()));
      await this.consumer.run({ autoCommit: false, eachMessage: (payload) => this.onMessage(payload) });
      // A consumer that cannot join (group ACL) crashes instead: subscribe() rejects with the reason.
      await Promise.race([withDeadline(joined, JOIN_TIMEOUT_MS), crashed]);
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

  private async onMessage(payload: EachMessagePayload): Promise<void> {
    const { topic, partition, message } = payload;
    const envelope = envelopeOfMessage(topic, partition, message.offset, message.key, message.value, message.headers);
    for (let attempt = 1; ; attempt++) {
      // Leaves the offset uncommitted: the event is delivered again after the shutdown.
      if (this.closing) return;
      try {
        await this.opts.handler(incomingOf(envelope, attempt));
        break;
      } catch (err) {
        if (attempt >= this.opts.maxAttempts) {
          await this.opts.publishEnvelope(deadLetterOf(envelope, attempt, err));
          this.log.warn({ eventId: envelope.id, attempts: attempt, err }, "bus.event.dead_lettered");
          break;
        }
        this.log.warn({ eventId: envelope.id, attempt, err }, "bus.handler.failed");
        await this.waker.sleep(retryDelay(this.settings, attempt));
        await payload.heartbeat();
      }
    }
    await this.consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
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
    payload: new Uint8Array(value ?? Buffer.alloc(0)),
    headers,
  };
}

/**
 * Logging happened already (bus.kafka.misconfigured): exit, so the orchestrator shows a failing
 * service with that line instead of one that silently stopped publishing or consuming.
 */
function exitOnFatal(): void {
  process.exit(1);
}

function closedError(): DomainError {
  return new DomainError("unavailable", "the event bus is closed");
}
