import { gatewayClient, startStack } from "@router/testkit";
import { runLoad, type LoadResult, type LoadTarget } from "./load";

/**
 * A management read authenticated two ways, on the separate-process stack: a bearer management key
 * and a dashboard session (cookie). Both resolve through a 10-second per-replica cache, so a session
 * should cost what a key costs. Open-loop load on `GET /v1/organization`, rounds alternating.
 * `make bench-management`; BENCH_RATE (default 200/s), BENCH_SECONDS (10), BENCH_ROUNDS (3).
 */
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PATH = "/v1/organization";

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  // The management rate limit (300 a minute per credential) still counts every request, so its cost
  // is in the figures; its budget is raised so the load is never refused.
  const rateLimits = JSON.stringify({ management: { per_minute: 10_000_000, per_day: 100_000_000 } });
  const stack = await startStack({ providerBaseUrls: {}, extraEnv: { LOG_LEVEL: "warn", GATEWAY_RATE_LIMITS: rateLimits } });
  try {
    const org = await stack.createOrg("Bench Management");
    const exchange = await fetch(`${stack.gatewayUrl}/v1/auth/exchange`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: org.managementKey }),
    });
    const cookie = exchange.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    if (exchange.status !== 200 || !cookie.includes("rt_session=")) throw new Error(`exchange failed: ${exchange.status}`);
    if ((await gatewayClient(stack.gatewayUrl, org.managementKey).get(PATH)).status !== 200) throw new Error("key read failed");

    const targets: Record<string, LoadTarget> = {
      "management key": { origin: stack.gatewayUrl, path: PATH, method: "GET", headers: { authorization: `Bearer ${org.managementKey}` }, stream: false },
      "dashboard session": { origin: stack.gatewayUrl, path: PATH, method: "GET", headers: { cookie }, stream: false },
    };
    const results: Record<string, LoadResult[]> = { "management key": [], "dashboard session": [] };
    // A short warm-up of each, then alternating rounds so drift on a shared machine hits both alike.
    for (const target of Object.values(targets)) await runLoad(target, RATE, 2);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, target] of Object.entries(targets)) {
        const r = await runLoad(target, RATE, SECONDS);
        if (r.failed > 0) throw new Error(`${name}: ${r.failed} requests failed`);
        results[name]!.push(r);
      }
    }
    process.stdout.write(`\nGET ${PATH} at ${RATE}/s for ${SECONDS} s, median of ${ROUNDS} rounds [each round]\n`);
    for (const [name, runs] of Object.entries(results)) {
      const p50 = runs.map((r) => r.p50);
      const p99 = runs.map((r) => r.p99);
      const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
      process.stdout.write(
        `  ${name.padEnd(18)} p50 ${median(p50).toFixed(2)} ms [${fmt(p50)}]  p99 ${median(p99).toFixed(2)} ms [${fmt(p99)}]\n`,
      );
    }
  } finally {
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
