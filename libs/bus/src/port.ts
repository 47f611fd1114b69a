import type { Logger } from "@router/logging";

/** How the redis adapter may lay out a stream entry (libs/bus/src/redis/stream-codec.ts). */
export const REDIS_ENTRY_LAYOUTS = ["fields", "packed"] as const;
export type RedisEntryLayout = (typeof REDIS_ENTRY_LAYOUTS)[number];

/** An event to publish. `key` decides ordering: events with one key are delivered in order. */
export interface OutgoingEvent {
  topic: string;
  key: string;
  /** The event type, e.g. `router.request.completed.v1`; sent as the `event-type` header. */
  type: string;
  payload: Uint8Array;
  /** Unique event id (sent as `event-id`); generated when omitted. */
  id?: string;
  headers?: Record<string, string>;
}

export interface IncomingEvent {
  id: string;
  topic: string;
  key: string;
  type: string;
  payload: Uint8Array;
  headers: Record<string, string>;
  /** 1 on first delivery; higher on redelivery after a failed or crashed handler. */
  attempt: number;
}

export type EventHandler = (event: IncomingEvent) => Promise<void>;

/** Handles consecutive events of one partition together, in order; resolves once all are done. */
export type BatchHandler = (events: IncomingEvent[]) => Promise<void>;

export interface SubscribeOptions {
  topic: string;
  /**
   * The consuming service's name (letters, digits, `-`, `_`). Its members share the work, each
   * event goes to one of them. The broker's group is per topic, `<group>.<topic>` (every topic a
   * service reads is its own group, so no group ever spans two topics); a new one starts where the
   * service's group before this naming stood (see the README, "Consumer groups").
   */
  group: string;
  handler: EventHandler;
  /**
   * Lets the adapter hand over several consecutive events of one partition at once (one statement
   * and one commit for many, on a busy topic). If it throws, each event of the batch is tried again
   * alone through `handler`, so an event that cannot be handled fails, retries and dead-letters
   * alone. The redis adapter batches what one read brought (see `BusConfig.batchWaitMs`); memory
   * hands over what gathered on the partition within `batchWaitMs` (up to 256); kafka what one
   * fetch brought for a partition (up to 256 at a time).
   */
  batchHandler?: BatchHandler;
  /**
   * This subscription's own `BusConfig.batchWaitMs` (redis, memory; kafka hands over what a fetch
   * brought): a consumer whose effect a following request must see soon (routing's sticky pins)
   * gathers for less than the others. A function is asked before each gather; `undefined` from it
   * means the bus's.
   */
  batchWaitMs?: number | (() => number | undefined);
  /** Deliveries before an event is moved to `<topic>.dlq`. Default 5. */
  maxAttempts?: number;
}

export interface Subscription {
  close(): Promise<void>;
}

/** The event bus port. Adapters: kafka, redis (Streams), memory. */
export interface EventBus {
  /**
   * Resolves once the broker acknowledged the event, or once it is safe in the durable outbox
   * because the broker could not be reached (it is sent when the broker is back).
   */
  publish(event: OutgoingEvent): Promise<void>;
  subscribe(opts: SubscribeOptions): Promise<Subscription>;
  /**
   * Waits, up to `timeoutMs`, until this bus's live subscriptions have handled every event published
   * so far, those their handlers publish meanwhile included; resolves whether they did. It matters
   * where nothing outlives the process (memory): the one-process runner calls it after the gateway
   * stopped and before the consumers stop. A broker keeps what is not consumed yet, so redis and
   * kafka resolve at once.
   */
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export type BusKind = "memory" | "redis" | "kafka";

export interface BusConfig {
  kind: BusKind;
  /** Client and consumer names in logs and broker metadata, usually the service name. */
  clientId: string;
  redisUrl?: string;
  kafkaBrokers?: string[];
  /**
   * Directory of the durable outbox for events the broker could not take (redis, kafka).
   * Default `.data/outbox/<clientId>` under the working directory. One bus per directory.
   */
  outboxDir?: string;
  log: Logger;
  /** Prefix for every topic on the broker (`<namespace>.<topic>`); isolates installs sharing a broker. */
  namespace?: string;
  /**
   * Partitions per topic (memory, redis; Kafka topics are declared by the deployment with
   * `declareKafkaTopics`, and the bus never creates one). Events with one key
   * land in one partition; a partition is consumed by one group member at a time. Default 8.
   * Redis records the count of a topic on first use and every client follows the recorded value.
   */
  partitions?: number;
  /**
   * A delivery unacknowledged this long counts as crashed: the member leaves its group and another
   * member takes the event over (kafka: the consumer session timeout, at least 6 s). Default 30 s.
   */
  reclaimIdleMs?: number;
  /** Delay before redelivering an event whose handler failed; doubles per attempt, at most 30 s. Default 1 s. */
  retryDelayMs?: number;
  /** How long `publish` waits for the broker before keeping the event in the outbox. Default 3 s. */
  publishTimeoutMs?: number;
  /** Pause between attempts to send the outbox while the broker is away. Default 1 s. */
  outboxRetryMs?: number;
  /** Blocking-read and heartbeat period of consumers (redis); bounds how fast work moves. Default 1 s. */
  pollMs?: number;
  /** How long `close()` waits for running handlers before abandoning them to redelivery. Default 10 s. */
  closeTimeoutMs?: number;
  /**
   * With a batch handler, how long a consumer lets new events gather after a read that was not
   * full, before reading again (redis), or before handing over what waits on a partition (memory):
   * fewer, larger batches for that much delay. Every batch costs a read, an acknowledgement and a
   * statement whatever its size, so at a steady rate this sets most of a consumer's CPU. Default
   * 250 ms (`DEFAULT_BATCH_WAIT_MS`); 0 hands over at once. A subscription may set its own.
   */
  batchWaitMs?: number;
  /**
   * How the redis adapter lays out the stream entries it writes: `fields` (the default) or
   * `packed`, one field holding the whole event, cheaper for Redis and for every consumer group.
   * Readers take both; a reader of an earlier release takes a packed entry as an event without an
   * id, so choose `packed` once every service of the install runs a release that reads it.
   */
  redisEntryLayout?: RedisEntryLayout;
  /**
   * Called once when the bus cannot go on and no retry can fix it: Kafka refuses the deployment
   * after start (an undeclared topic, a missing ACL, an unsupported broker; logged
   * `bus.kafka.misconfigured`), or a consumer stopped for good (kafkajs gave up restarting it, or a
   * redis consumer kept failing on an error that is not an outage; logged `bus.consumer.stopped`),
   * or an error that comes from code (a `TypeError`) met a publish (logged `bus.outbox.stopped`).
   * Events that met it stay in the outbox. Default: exit the process with status 1, so the
   * orchestrator restarts it and shows the failing service instead of one that is up, ready, and
   * silently stopped publishing or consuming. (At start, `createBus` and `subscribe` reject instead.)
   */
  onFatal?: (err: Error) => void;
}
