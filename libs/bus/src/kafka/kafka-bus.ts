import {
  Kafka,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer,
  type EachMessagePayload,
  type IHeaders,
  type logCreator,
  type Producer,
} from "kafkajs";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { withDeadline } from "../deadline";
import { LiveSubscriptions } from "../live-subscriptions";
import { deadLetterOf, envelopeOf, HEADER_EVENT_ID, HEADER_EVENT_TYPE, incomingOf, type Envelope } from "../envelope";
import { Outbox } from "../outbox";
import type { BusConfig, EventBus, OutgoingEvent, SubscribeOptions, Subscription } from "../port";
import { maxAttemptsOf, retryDelay, settingsOf, type BusSettings } from "../settings";
import { Waker } from "../waker";

// Brokers refuse session timeouts below group.min.session.timeout.ms, 6 s by default.
const MIN_SESSION_TIMEOUT_MS = 6_000;
const JOIN_TIMEOUT_MS = 30_000;

/**
 * The Kafka bus (kafkajs), the production engine. Idempotent producer waiting for all in-sync
 * replicas, one request in flight (so retries cannot reorder a partition); consumer groups with
 * offsets committed after the handler; bounded retries then `<topic>.dlq`. Events keyed by `key`,
 * so one key stays in one partition, in order.
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
  const bus = new KafkaBus(kafka, settings, config.log);
  await bus.open();
  return bus;
}

class KafkaBus implements EventBus {
  private readonly producer: Producer;
  private readonly admin: Admin;
  private connected: Promise<void> | undefined;
  private outbox: Outbox | undefined;
  private readonly topics = new Map<string, Promise<void>>();
  private readonly subscriptions = new LiveSubscriptions<KafkaSubscription>();
  private closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly settings: BusSettings,
    private readonly log: Logger,
  ) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    this.admin = kafka.admin();
    this.producer.on(this.producer.events.DISCONNECT, () => (this.connected = undefined));
  }

  async open(): Promise<void> {
    // Not fatal when Kafka is away at start: publishes go to the outbox until it is back.
    await withDeadline(this.connect(), this.settings.publishTimeoutMs);
    this.outbox = await Outbox.forBroker(this.settings, this.log, {
      send: (envelope) => this.send(envelope),
      unreachable: isUnreachable,
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
      ensureTopic: (topic) => this.ensureTopic(topic),
      publishEnvelope: (envelope) => this.publishEnvelope(envelope),
    });
    return this.subscriptions.start(subscription);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.subscriptions.closeAll();
    await this.outbox?.close();
    await withDeadline(Promise.all([this.producer.disconnect(), this.admin.disconnect()]), this.settings.closeTimeoutMs);
  }

  private publishEnvelope(envelope: Envelope): Promise<void> {
    if (!this.outbox) throw closedError();
    return this.outbox.publish(envelope);
  }

  private async send(envelope: Envelope): Promise<void> {
    await this.connect();
    await this.ensureTopic(envelope.topic);
    await this.producer.send({
      topic: envelope.topic,
      acks: -1,
      timeout: this.settings.publishTimeoutMs,
      messages: [{ key: envelope.key, value: Buffer.from(envelope.payload), headers: envelope.headers }],
    });
  }

  private connect(): Promise<void> {
    if (!this.connected) {
      const connecting = Promise.all([this.producer.connect(), this.admin.connect()]).then(() => undefined);
      connecting.catch(() => {
        if (this.connected === connecting) this.connected = undefined;
      });
      this.connected = connecting;
    }
    return this.connected;
  }

  /** Creates a missing topic with the configured partition count (production topics come from ops). */
  private ensureTopic(topic: string): Promise<void> {
    let known = this.topics.get(topic);
    if (!known) {
      known = this.connect()
        .then(() =>
          this.admin.createTopics({
            topics: [{ topic, numPartitions: this.settings.partitions }],
            waitForLeaders: true,
          }),
        )
        .then(() => undefined);
      known.catch(() => this.topics.delete(topic));
      this.topics.set(topic, known);
    }
    return known;
  }
}

interface KafkaSubscriptionOptions {
  topic: string;
  group: string;
  handler: SubscribeOptions["handler"];
  maxAttempts: number;
  ensureTopic(topic: string): Promise<void>;
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
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
    this.log = log.child({ topic: opts.topic, group: opts.group });
  }

  /** Connects, joins the group (waiting for the first assignment) and starts consuming. */
  async start(): Promise<void> {
    await this.opts.ensureTopic(this.opts.topic);
    await this.consumer.connect();
    // From the beginning for a new group: events published before it first subscribed are not lost.
    await this.consumer.subscribe({ topics: [this.opts.topic], fromBeginning: true });
    const joined = new Promise<void>((resolve) => this.consumer.on(this.consumer.events.GROUP_JOIN, () => resolve()));
    await this.consumer.run({ autoCommit: false, eachMessage: (payload) => this.onMessage(payload) });
    await withDeadline(joined, JOIN_TIMEOUT_MS);
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

/** Broker away or slow (kept in the outbox and retried), as opposed to the broker refusing the event. */
function isUnreachable(err: unknown): boolean {
  let cause: unknown = err;
  while (cause instanceof KafkaJSNumberOfRetriesExceeded && cause.cause) cause = cause.cause;
  if (cause instanceof KafkaJSProtocolError) return cause.retriable;
  return true;
}

/**
 * kafkajs logs through pino. Connection failures are logged by kafkajs on every retry; the bus
 * reports an unreachable broker itself (bus.publish.deferred, bus.outbox.*), so those go to debug.
 */
function pinoLogCreator(log: Logger): logCreator {
  const child = log.child({ component: "kafkajs" });
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _timestamp, ...fields } = entry;
      const data = { namespace, detail: message, ...fields };
      if (level <= logLevel.WARN && !expectedNoise(namespace, message)) child.warn(data, "bus.kafka.client");
      else if (level <= logLevel.INFO) child.debug(data, "bus.kafka.client");
      else child.trace(data, "bus.kafka.client");
    };
}

function expectedNoise(namespace: string, message: string): boolean {
  if (namespace === "Connection" || namespace === "BrokerPool") return true;
  // Retries are bounded on purpose: the outbox does the long retrying, so a send never hangs.
  return message.startsWith("Limiting retries for the idempotent producer");
}

function closedError(): DomainError {
  return new DomainError("unavailable", "the event bus is closed");
}
