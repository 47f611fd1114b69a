import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { HEADER_CONTENT_TYPE, HEADER_EVENT_ID, HEADER_EVENT_TYPE, PROTOBUF_CONTENT_TYPE } from "@router/bus";
import { TOPICS } from "@router/proto";
import YAML from "yaml";

/**
 * Builds docs/asyncapi.yaml: the topics for downstream teams, from the protos (messages, fields and
 * their comments, through `buf build`) and the small table below (who produces and who consumes
 * each topic, in which consumer group). `make asyncapi` writes it; the test beside this file fails
 * when the checked-in document differs from what this builds.
 */

const ROOT = join(__dirname, "..", "..", "..");
export const ASYNCAPI_FILE = join(ROOT, "docs", "asyncapi.yaml");

interface Consumer {
  service: string;
  /** The consumer group: the service's name, so each service keeps its own offsets. */
  group: string;
  does: string;
}

interface TopicEntry {
  /** The payload message in proto/router/events/v1. */
  message: string;
  producer: string;
  when: string;
  consumers: Consumer[];
}

/** Every topic of `TOPICS`; the compiler refuses a topic missing here. */
export const TOPIC_TABLE: Record<keyof typeof TOPICS, TopicEntry> = {
  requestCompleted: {
    message: "RequestCompleted",
    producer: "gateway",
    when:
      "after every chat completion request, served, failed or refused (before a served answer is written: the ledger settles from it); " +
      "the ledger publishes one too for a request whose gateway went away (error_code router.gateway_lost, settled_by_ledger)",
    consumers: [
      { service: "ledger", group: "ledger", does: "settles the request's hold or spend lease, records it per workspace and agent, reports a run's turn (idempotent by request id)" },
      { service: "activity", group: "activity", does: "records the request and its upstream attempts, daily totals and conversations" },
      { service: "routing", group: "routing", does: "keeps each endpoint's recent success rate and latency for ranking" },
      { service: "runaway", group: "runaway", does: "adds spend and requests to per-subject 15-minute buckets for the runaway sweep" },
      { service: "broadcast", group: "broadcast", does: "delivers a metadata record to webhook and OTLP destinations" },
      { service: "reports", group: "reports", does: "keeps the monthly per-workspace rollups of client reports" },
    ],
  },
  thresholdCrossed: {
    message: "ThresholdCrossed",
    producer: "ledger",
    when: "when a settlement moves a key ceiling's or an agent budget's usage to a higher whole percentage of its limit",
    consumers: [{ service: "alerts", group: "alerts", does: "announces key_limit.threshold or agent_limit.threshold to the channels listing that threshold" }],
  },
  runawayFlagged: {
    message: "RunawayFlagged",
    producer: "runaway",
    when: "when the runaway sweep flags a key or an agent (at most once an hour per subject)",
    consumers: [
      { service: "alerts", group: "alerts", does: "announces spend.runaway to every channel" },
      { service: "gateway", group: "gateway", does: "pauses the key when the action is paused" },
    ],
  },
};

// --- The protos, as buf reads them -------------------------------------------------------------

export interface FieldDescriptor {
  name: string;
  number: number;
  label: "LABEL_OPTIONAL" | "LABEL_REPEATED" | "LABEL_REQUIRED";
  type: string;
  typeName?: string;
  proto3Optional?: boolean;
}

interface MessageDescriptor {
  name: string;
  field: FieldDescriptor[];
}

interface FileDescriptor {
  name: string;
  package: string;
  messageType?: MessageDescriptor[];
  sourceCodeInfo?: { location?: Array<{ path?: number[]; leadingComments?: string }> };
}

/** One message of proto/router/events/v1 with its comments. */
export interface EventMessage {
  file: string;
  fullName: string;
  name: string;
  comment: string;
  fields: Array<FieldDescriptor & { comment: string; protoType: string }>;
}

const SCALARS: Record<string, string> = {
  TYPE_STRING: "string",
  TYPE_BYTES: "bytes",
  TYPE_BOOL: "bool",
  TYPE_INT32: "int32",
  TYPE_INT64: "int64",
  TYPE_UINT32: "uint32",
  TYPE_UINT64: "uint64",
  TYPE_DOUBLE: "double",
  TYPE_FLOAT: "float",
};

const oneLine = (comment: string | undefined): string =>
  (comment ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ");

/**
 * The events package (or another package at `path`) as buf compiles it (the same compiler `make
 * proto` and `buf lint` use).
 */
export function eventMessages(path = "router/events/v1", pkg = "router.events.v1"): EventMessage[] {
  const json = execFileSync(join(ROOT, "node_modules", ".bin", "buf"), ["build", "--path", path, "-o", "-#format=json"], {
    cwd: join(ROOT, "proto"),
    encoding: "utf8",
  });
  const files = (JSON.parse(json) as { file: FileDescriptor[] }).file.filter((f) => f.package === pkg);
  return files.flatMap((file) => {
    const locations = file.sourceCodeInfo?.location ?? [];
    const commentAt = (path: number[]) => oneLine(locations.find((l) => l.path?.join(".") === path.join("."))?.leadingComments);
    return (file.messageType ?? []).map((m, mi) => ({
      file: `proto/${file.name}`,
      fullName: `${file.package}.${m.name}`,
      name: m.name,
      comment: commentAt([4, mi]),
      fields: m.field.map((f, fi) => {
        const base = f.type === "TYPE_MESSAGE" ? (f.typeName ?? "").split(".").pop() ?? "" : (SCALARS[f.type] ?? f.type);
        const prefix = f.label === "LABEL_REPEATED" ? "repeated " : f.proto3Optional ? "optional " : "";
        return { ...f, comment: commentAt([4, mi, 2, fi]), protoType: `${prefix}${base}` };
      }),
    }));
  });
}

// --- The document ------------------------------------------------------------------------------

type Schema = Record<string, unknown>;

function jsonSchemaOf(f: FieldDescriptor): Schema {
  if (f.type === "TYPE_MESSAGE") return { $ref: `#/components/schemas/${(f.typeName ?? "").split(".").pop()}` };
  switch (f.type) {
    case "TYPE_BOOL":
      return { type: "boolean" };
    case "TYPE_INT32":
    case "TYPE_UINT32":
      return { type: "integer", format: "int32" };
    case "TYPE_INT64":
    case "TYPE_UINT64":
      return { type: "integer", format: "int64" };
    case "TYPE_DOUBLE":
    case "TYPE_FLOAT":
      return { type: "number", format: "double" };
    default:
      return { type: "string" };
  }
}

function messageSchema(m: EventMessage): Schema {
  return {
    type: "object",
    ...(m.comment ? { description: m.comment } : {}),
    "x-protobuf-message": m.fullName,
    properties: Object.fromEntries(
      m.fields.map((f) => {
        const value = jsonSchemaOf(f);
        return [
          f.name,
          {
            ...(f.comment ? { description: f.comment } : {}),
            ...(f.label === "LABEL_REPEATED" ? { type: "array", items: value } : value),
            "x-protobuf-field": f.number,
            "x-protobuf-type": f.protoType,
          },
        ];
      }),
    ),
  };
}

const DESCRIPTION = `Events the router's services publish on the bus (Kafka in production; Redis Streams or in-process
for small installs), for its own consumers and for downstream teams. The protobuf messages in
\`proto/router/events/v1/\` are the contract: each payload is one message in protobuf binary encoding,
fields are only ever added (never renumbered or retyped), and an incompatible change gets a new topic
(\`.v2\`). Events carry metadata only: never a prompt or a completion.

- **Key**: the organisation id, so one organisation's events stay in order.
- **Headers**: \`${HEADER_EVENT_ID}\` (unique per event), \`${HEADER_EVENT_TYPE}\` (the topic name),
  \`${HEADER_CONTENT_TYPE}: ${PROTOBUF_CONTENT_TYPE}\`.
- **Delivery** is at least once. Every consumer is idempotent on the event id: processing an event
  twice, or replaying a whole topic, changes nothing.
- **Consumer groups** are named after the consuming service, so each service keeps its own offsets;
  a downstream team uses a group of its own and never shares one with a router service.
- **Poison messages**: after bounded retries a consumer moves an event it cannot handle to
  \`<topic>.dlq\` (same id, key and payload, plus \`dlq-original-topic\`, \`dlq-attempts\` and
  \`dlq-reason\` headers).

This document is generated from the protos and a table of producers and consumers
(\`libs/proto/test/asyncapi-document.ts\`); \`make asyncapi\` rewrites it and CI fails when it is stale.`;

/** The document as written to docs/asyncapi.yaml: multi-line text as literal blocks, line breaks kept. */
export function asyncApiYaml(document: Record<string, unknown>): string {
  const header = "# Generated by `make asyncapi` from proto/router/events/v1 and libs/proto/test/asyncapi-document.ts.\n";
  return header + YAML.stringify(document, { lineWidth: 100, blockQuote: "literal", aliasDuplicateObjects: false });
}

/** The AsyncAPI 3.0 document for every topic of `TOPICS`. */
export function buildAsyncApi(messages: EventMessage[] = eventMessages()): Record<string, unknown> {
  const byName = new Map(messages.map((m) => [m.name, m]));
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const componentMessages: Record<string, unknown> = {};

  for (const [key, topic] of Object.entries(TOPICS) as Array<[keyof typeof TOPICS, string]>) {
    const entry = TOPIC_TABLE[key];
    const message = byName.get(entry.message);
    if (!message) throw new Error(`${topic}: no message ${entry.message} in proto/router/events/v1`);
    channels[key] = {
      address: topic,
      title: topic,
      description: `Published by ${entry.producer} ${entry.when}. Payload \`${message.fullName}\` (${message.file}).`,
      messages: { [entry.message]: { $ref: `#/components/messages/${entry.message}` } },
    };
    const channelMessage = () => [{ $ref: `#/channels/${key}/messages/${entry.message}` }];
    operations[`${key}.${entry.producer}.send`] = {
      action: "send",
      channel: { $ref: `#/channels/${key}` },
      summary: `${entry.producer} publishes ${topic}`,
      messages: channelMessage(),
      "x-service": entry.producer,
    };
    for (const c of entry.consumers) {
      operations[`${key}.${c.service}.receive`] = {
        action: "receive",
        channel: { $ref: `#/channels/${key}` },
        summary: `${c.service} ${c.does}`,
        messages: channelMessage(),
        bindings: { kafka: { groupId: { type: "string", enum: [c.group] } } },
        "x-service": c.service,
        "x-consumer-group": c.group,
      };
    }
    componentMessages[entry.message] = {
      name: entry.message,
      title: message.fullName,
      contentType: PROTOBUF_CONTENT_TYPE,
      headers: { $ref: "#/components/schemas/EventHeaders" },
      payload: { $ref: `#/components/schemas/${entry.message}` },
      bindings: { kafka: { key: { type: "string", description: "The organisation id." } } },
      "x-protobuf-message": message.fullName,
      "x-protobuf-file": message.file,
    };
  }

  const schemas: Record<string, unknown> = {
    EventHeaders: {
      type: "object",
      required: [HEADER_EVENT_ID, HEADER_EVENT_TYPE, HEADER_CONTENT_TYPE],
      properties: {
        [HEADER_EVENT_ID]: {
          type: "string",
          description: "Unique per event; consumers deduplicate on it. request.completed uses the generation id (gen-...).",
        },
        [HEADER_EVENT_TYPE]: { type: "string", description: "The topic name, version included." },
        [HEADER_CONTENT_TYPE]: { type: "string", const: PROTOBUF_CONTENT_TYPE },
      },
    },
  };
  for (const m of messages) schemas[m.name] = messageSchema(m);

  return {
    asyncapi: "3.0.0",
    info: { title: "Router events", version: "1.0.0", description: DESCRIPTION },
    defaultContentType: PROTOBUF_CONTENT_TYPE,
    servers: {
      kafka: { host: "kafka:9092", protocol: "kafka", description: "The brokers of KAFKA_BROKERS (ROUTER_BUS=kafka)." },
      redis: { host: "redis:6379", protocol: "redis", description: "Redis Streams with consumer groups (ROUTER_BUS=redis)." },
    },
    channels,
    operations,
    components: { messages: componentMessages, schemas },
  };
}
