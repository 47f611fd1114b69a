import type Redis from "ioredis";
import type { Logger } from "@router/logging";

/** What Redis says about keeping every write across a restart. */
export type Persistence = "aof" | "none" | "unknown";

/**
 * The Redis bus is the only copy of events not yet consumed: without AOF a Redis restart loses
 * them. Warns at start when Redis runs without it; a Redis that refuses CONFIG (managed services,
 * ACLs) cannot be checked, which is logged too, differently, as a reminder rather than a finding.
 */
export async function checkPersistence(client: Redis, log: Logger): Promise<Persistence> {
  let appendonly: string | undefined;
  let save: string | undefined;
  try {
    appendonly = configValue(await client.config("GET", "appendonly"));
    save = configValue(await client.config("GET", "save"));
  } catch (err) {
    log.info(
      { reason: err instanceof Error ? err.message : String(err), need: "appendonly yes" },
      "bus.redis.persistence_unchecked",
    );
    return "unknown";
  }
  if (appendonly === "yes") return "aof";
  log.warn(
    {
      appendonly: appendonly ?? "",
      save: save ?? "",
      fix: "CONFIG SET appendonly yes (and in redis.conf: appendonly yes, appendfsync everysec); docs/runbook.md, Redis",
    },
    "bus.redis.not_persistent",
  );
  return "none";
}

function configValue(reply: unknown): string | undefined {
  return Array.isArray(reply) && typeof reply[1] === "string" ? reply[1] : undefined;
}
