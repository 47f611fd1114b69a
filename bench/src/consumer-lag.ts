import Redis from "ioredis";

/**
 * How long after a load ended every consumer group of a topic on the Redis Streams bus had taken
 * (acknowledged) every event: polls XINFO GROUPS on each partition stream until no group has
 * entries left to read (`lag`) or unacknowledged (`pending`). Null when it did not catch up within
 * `timeoutMs`.
 */
export async function catchUpMs(redisUrl: string, namespacedTopic: string, timeoutMs = 30_000): Promise<number | null> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const partitions = Number((await redis.get(`${namespacedTopic}:partitions`)) ?? "0");
    const started = performance.now();
    while (performance.now() - started < timeoutMs) {
      let behind = 0;
      for (let p = 0; p < partitions; p++) {
        const groups = (await redis.call("XINFO", "GROUPS", `${namespacedTopic}:p${p}`).catch(() => [])) as unknown[][];
        for (const g of groups) {
          const fields = new Map<string, unknown>();
          for (let i = 0; i + 1 < g.length; i += 2) fields.set(String(g[i]), g[i + 1]);
          behind += Number(fields.get("lag") ?? 0) + Number(fields.get("pending") ?? 0);
        }
      }
      if (behind === 0) return Math.round(performance.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
    return null;
  } finally {
    redis.disconnect();
  }
}
