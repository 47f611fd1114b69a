import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Parser } from "@asyncapi/parser";
import { TOPICS } from "@router/proto";
import YAML from "yaml";
import { ASYNCAPI_FILE, asyncApiYaml, buildAsyncApi, eventMessages, type EventMessage } from "./asyncapi-document";

/** The checked-in document, as downstream teams read it. */
interface Document {
  channels: Record<string, { address: string; messages: Record<string, unknown> }>;
  operations: Record<string, { action: string; channel: { $ref: string }; "x-service": string; "x-consumer-group"?: string }>;
  components: { schemas: Record<string, { properties?: Record<string, { "x-protobuf-field": number; "x-protobuf-type": string }> }> };
}

const SERVICES = join(__dirname, "..", "..", "..", "services");
let messages: EventMessage[];
let text: string;
let doc: Document;

beforeAll(() => {
  messages = eventMessages();
  // `make asyncapi`: rewrite the document from the protos and the topic table.
  if (process.env.ASYNCAPI_WRITE === "1") {
    writeFileSync(ASYNCAPI_FILE, asyncApiYaml(buildAsyncApi(messages)));
  }
  text = readFileSync(ASYNCAPI_FILE, "utf8");
  doc = YAML.parse(text) as Document;
});

describe("docs/asyncapi.yaml", () => {
  test("is what the protos and the topic table build (run `make asyncapi` after changing either)", () => {
    expect(text).toBe(asyncApiYaml(buildAsyncApi(messages)));
  });

  test("is a valid AsyncAPI document", async () => {
    const { document, diagnostics } = await new Parser().parse(text);

    // Severity 0 is an error; warnings and hints are advice.
    expect(diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join(".")}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
  });

  test("describes every topic of TOPICS, and no other", () => {
    expect(Object.values(doc.channels).map((c) => c.address).sort()).toEqual(Object.values(TOPICS).sort());
  });

  test("describes every message of proto/router/events/v1 with exactly its fields, numbers and types", () => {
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const m of messages) {
      const described = doc.components.schemas[m.name]?.properties;
      expect([m.name, described && Object.keys(described).sort()]).toEqual([m.name, m.fields.map((f) => f.name).sort()]);
      for (const f of m.fields) {
        expect([`${m.name}.${f.name}`, described?.[f.name]?.["x-protobuf-field"], described?.[f.name]?.["x-protobuf-type"]]).toEqual([
          `${m.name}.${f.name}`,
          f.number,
          f.protoType,
        ]);
      }
    }
  });

  test("names each consumer group after its service, and gives every topic one producer", () => {
    const ops = Object.values(doc.operations);
    for (const op of ops.filter((o) => o.action === "receive")) expect(op["x-consumer-group"]).toBe(op["x-service"]);
    for (const key of Object.keys(doc.channels)) {
      expect(ops.filter((o) => o.action === "send" && o.channel.$ref === `#/channels/${key}`)).toHaveLength(1);
    }
  });

  test("lists the consumer group and topics of every consumer in the services' code", () => {
    // A consumer declares `CONSUMER_GROUP = "<group>"` and names its topics as `TOPICS.<topic>` in the same file.
    const found: string[] = [];
    for (const service of readdirSync(SERVICES)) {
      const src = join(SERVICES, service, "src");
      let files: string[];
      try {
        files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
      } catch {
        continue;
      }
      for (const file of files) {
        const code = readFileSync(join(src, file), "utf8");
        const group = /CONSUMER_GROUP\s*=\s*"([^"]+)"/.exec(code)?.[1];
        if (!group) continue;
        for (const [, topic] of code.matchAll(/TOPICS\.(\w+)/g)) {
          const op = doc.operations[`${topic}.${service}.receive`];
          expect([service, topic, op?.["x-consumer-group"]]).toEqual([service, topic, group]);
          found.push(`${service}:${topic}`);
        }
      }
    }
    // activity and routing consume request.completed today; the check must have seen them.
    expect(found).toEqual(expect.arrayContaining(["activity:requestCompleted", "routing:requestCompleted"]));
  });
});
