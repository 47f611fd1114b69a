import type { Logger } from "@router/logging";

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

export interface SubscribeOptions {
  topic: string;
  /** Consumer group; members of one group share the work, each event goes to one of them. */
  group: string;
  handler: EventHandler;
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
  close(): Promise<void>;
}

export type BusKind = "memory" | "redis" | "kafka";

export interface BusConfig {
  kind: BusKind;
  /** Client and consumer names in logs and broker metadata, usually the service name. */
  clientId: string;
  redisUrl?: string;
  kafkaBrokers?: string[];
  /** Directory of the durable outbox for events the broker could not take. */
  outboxDir?: string;
  log: Logger;
}
