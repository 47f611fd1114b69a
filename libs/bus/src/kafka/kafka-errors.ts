import { isProgrammingError } from "../failure";

/**
 * What a kafkajs error means for the bus. Only a broker that is away or slow is worth retrying
 * (the outbox keeps events until it is back); a broker that refuses the client (API version,
 * authentication, ACLs, an undeclared topic) will refuse it again forever, so those stop the
 * service with a message saying what to fix instead of hiding behind "broker unreachable". An
 * error from code (a `TypeError`, through kafkajs's wrappers too) is never taken for an outage.
 */
export type KafkaFailure =
  | { kind: "unreachable" }
  /** The broker refused this one event (too large, corrupt): set aside, the next may pass. */
  | { kind: "refused" }
  | { kind: "misconfigured"; reason: MisconfigurationReason; hint: string }
  /** An error from code (a `TypeError`), not from Kafka: no retry fixes it; the bus stops. */
  | { kind: "unexpected" };

export type MisconfigurationReason =
  | "unsupported_version"
  | "authentication_failed"
  | "topic_authorization_failed"
  | "group_authorization_failed"
  | "cluster_authorization_failed"
  | "topic_not_declared";

/** Names the deployment step that fixes each misconfiguration. */
const HINTS: Record<MisconfigurationReason, string> = {
  unsupported_version:
    "the broker does not support a Kafka API version the bus needs (kafkajs 2.2.4: Kafka 0.11 or later, idempotent producer): upgrade the brokers or point KAFKA_BROKERS at a supported cluster",
  authentication_failed: "the broker refused the client's credentials: check the Kafka SASL/TLS settings of this service",
  topic_authorization_failed:
    "the service's principal may not use this topic: grant Describe, Read and Write on the Router topics and their .dlq topics (docs/runbook.md, Kafka)",
  group_authorization_failed:
    "the service's principal may not use its consumer group: grant Read on the groups named after the service and topic, `<service>.<topic>` (a prefixed ACL on `<service>.`; docs/runbook.md, Kafka)",
  cluster_authorization_failed:
    "the service's principal lacks a cluster right: grant IdempotentWrite on the cluster (the producer is idempotent; docs/runbook.md, Kafka)",
  topic_not_declared:
    "the topic does not exist and services never create topics: declare them with `router kafka topics create` (the router-kafka-topics Job; docs/runbook.md, Kafka)",
};

const BY_TYPE: Record<string, MisconfigurationReason> = {
  UNSUPPORTED_VERSION: "unsupported_version",
  UNSUPPORTED_SASL_MECHANISM: "authentication_failed",
  SASL_AUTHENTICATION_FAILED: "authentication_failed",
  ILLEGAL_SASL_STATE: "authentication_failed",
  TOPIC_AUTHORIZATION_FAILED: "topic_authorization_failed",
  GROUP_AUTHORIZATION_FAILED: "group_authorization_failed",
  CLUSTER_AUTHORIZATION_FAILED: "cluster_authorization_failed",
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "cluster_authorization_failed",
  // kafkajs already retried it (leader elections raise it briefly): the topic really is missing.
  UNKNOWN_TOPIC_OR_PARTITION: "topic_not_declared",
};

const BY_NAME: Record<string, MisconfigurationReason> = {
  KafkaJSServerDoesNotSupportApiKey: "unsupported_version",
  KafkaJSSASLAuthenticationError: "authentication_failed",
};

interface KafkaJSLike {
  name?: unknown;
  type?: unknown;
  retriable?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Classifies an error from kafkajs, looking through its wrappers (retries exceeded, aggregates). */
export function classifyKafkaError(err: unknown): KafkaFailure {
  const found = misconfigurationIn(err, 0);
  if (found) return { kind: "misconfigured", reason: found, hint: HINTS[found] };
  if (isProgrammingError(err)) return { kind: "unexpected" };
  const root = innermost(err);
  if (isObject(root) && typeof root.type === "string" && root.retriable === false) return { kind: "refused" };
  return { kind: "unreachable" };
}

/** The error thrown (and handed to `onFatal`) when Kafka refuses the deployment itself. */
export class BusMisconfiguredError extends Error {
  constructor(
    readonly reason: MisconfigurationReason,
    readonly hint: string,
    readonly where: { topic?: string; group?: string },
    cause: unknown,
  ) {
    const at = [where.topic && `topic ${where.topic}`, where.group && `group ${where.group}`].filter(Boolean).join(", ");
    super(`kafka ${reason}${at ? ` (${at})` : ""}: ${hint}`, { cause });
    this.name = "BusMisconfiguredError";
  }
}

/** A BusMisconfiguredError when `err` is a misconfiguration, else undefined. */
export function misconfiguration(err: unknown, where: { topic?: string; group?: string }): BusMisconfiguredError | undefined {
  if (err instanceof BusMisconfiguredError) return err;
  const failure = classifyKafkaError(err);
  return failure.kind === "misconfigured" ? new BusMisconfiguredError(failure.reason, failure.hint, where, err) : undefined;
}

function misconfigurationIn(err: unknown, depth: number): MisconfigurationReason | undefined {
  if (!isObject(err) || depth > 5) return undefined;
  const byType = typeof err.type === "string" ? BY_TYPE[err.type] : undefined;
  if (byType) return byType;
  const byName = typeof err.name === "string" ? BY_NAME[err.name] : undefined;
  if (byName) return byName;
  if (Array.isArray(err.errors)) {
    for (const inner of err.errors) {
      const found = misconfigurationIn(inner, depth + 1);
      if (found) return found;
    }
  }
  return misconfigurationIn(err.cause, depth + 1);
}

function innermost(err: unknown): unknown {
  let current = err;
  for (let depth = 0; depth < 5 && isObject(current) && current.cause !== undefined; depth++) current = current.cause;
  return current;
}

function isObject(value: unknown): value is KafkaJSLike {
  return typeof value === "object" && value !== null;
}
