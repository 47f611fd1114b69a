import { logLevel, type logCreator } from "kafkajs";
import type { Logger } from "@router/logging";

/**
 * kafkajs logs through pino. Connection failures are logged by kafkajs on every retry; the bus
 * reports an unreachable broker itself (bus.publish.deferred, bus.outbox.*), so those go to debug.
 */
export function pinoLogCreator(log: Logger): logCreator {
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
