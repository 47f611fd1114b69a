import { randomBytes } from "node:crypto";
import { createBus } from "@router/bus";
import type { Logger } from "@router/logging";
import { events, TOPICS } from "@router/proto";
import type { CliConfig } from "../config";

const DECODERS: Record<string, (b: Uint8Array) => unknown> = {
  [TOPICS.requestCompleted]: (b) => events.RequestCompleted.toJSON(events.RequestCompleted.decode(b)),
  [TOPICS.thresholdCrossed]: (b) => events.ThresholdCrossed.toJSON(events.ThresholdCrossed.decode(b)),
  [TOPICS.runawayFlagged]: (b) => events.RunawayFlagged.toJSON(events.RunawayFlagged.decode(b)),
};

/** `events tail <topic>`: follows a topic in a throwaway consumer group and prints decoded events. */
export async function runEventsTail(config: CliConfig, log: Logger, topic: string | undefined): Promise<number> {
  if (!topic) {
    process.stderr.write(`events tail: name a topic (${Object.keys(DECODERS).join(", ")})\n`);
    return 2;
  }
  if (config.ROUTER_BUS === "memory") {
    process.stderr.write("events tail needs ROUTER_BUS=redis or kafka: the in-process bus is not shared\n");
    return 2;
  }
  const decode = DECODERS[topic] ?? ((b: Uint8Array) => ({ bytes: Buffer.from(b).toString("base64") }));
  const bus = await createBus({
    kind: config.ROUTER_BUS,
    clientId: "router-cli",
    namespace: config.ROUTER_BUS_NAMESPACE,
    redisUrl: config.REDIS_URL,
    kafkaBrokers: config.KAFKA_BROKERS?.split(","),
    log,
  });
  await bus.subscribe({
    topic,
    group: `cli-tail-${randomBytes(4).toString("hex")}`,
    handler: async (e) => {
      process.stdout.write(`${JSON.stringify({ id: e.id, type: e.type, key: e.key, event: decode(e.payload) })}\n`);
    },
  });
  await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
  await bus.close();
  return 0;
}
