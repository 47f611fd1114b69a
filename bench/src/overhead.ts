import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gatewayClient, startStack } from "@router/testkit";
import { cpuPerRequest, sampleCpu, type CpuSubjects } from "./cpu";
import { runLoad, type LoadResult, type LoadTarget } from "./load";

/**
 * `make bench`: the gateway's added latency over calling the fake upstream directly, at fixed
 * request rates, non-streaming (full response) and streaming (time to first content chunk), with
 * the services as separate processes on Postgres, Redis and the Redis Streams bus. Prints a table
 * and writes bench/results/overhead.json. Not a test: it asserts nothing.
 */
const RATES = (process.env.BENCH_RATES ?? "300").split(",").map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? "10");

function rssMb(pid: number | undefined): number | null {
  if (!pid) return null;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m?.[1] ? Math.round(Number(m[1]) / 1024) : null;
}

async function startFake(): Promise<{ url: string; origin: string; pid: number | undefined; stop(): void }> {
  const child = spawn(process.execPath, [join(__dirname, "fake-upstream-process.js")], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve) => child.stdout.once("data", (d: Buffer) => resolve(d.toString())));
  const { url, origin } = JSON.parse(line) as { url: string; origin: string };
  return { url, origin, pid: child.pid, stop: () => child.kill("SIGTERM") };
}

interface Row {
  scenario: string;
  rate: number;
  result: LoadResult;
  cpuMsPerRequest: Record<string, number>;
}

function body(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    stream,
    max_tokens: 64,
    messages: [
      { role: "system", content: "You are a terse assistant." },
      { role: "user", content: "Name one colour." },
    ],
  });
}

async function main(): Promise<void> {
  const fake = await startFake();
  // BENCH_NODE_ARGS reaches the services, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them under load.
  const stack = await startStack({
    providerBaseUrls: { openai: fake.url },
    extraEnv: { LOG_LEVEL: "warn", ...(process.env.BENCH_PGOPTIONS ? { PGOPTIONS: process.env.BENCH_PGOPTIONS } : {}) },
    nodeArgs: process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean),
  });
  try {
    const org = await stack.createOrg("Bench");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-bench-000000000000" });
    const plainKey = (await mgmt.post("/v1/keys", { name: "no-ceiling" })).json.data.key as string;
    const ceilingKey = (
      await mgmt.post("/v1/keys", { name: "hard-ceiling", limit: 1_000_000, limit_reset: "monthly", include_byok_in_limit: true })
    ).json.data.key as string;

    const gatewayOrigin = stack.gatewayUrl;
    const direct = (stream: boolean): LoadTarget => ({
      origin: fake.origin,
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench-000000000000" },
      body: body("gpt-4o-mini", stream),
      stream,
    });
    const viaGateway = (stream: boolean, key: string): LoadTarget => ({
      origin: gatewayOrigin,
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: body("openai/gpt-4o-mini", stream),
      stream,
    });

    const gatewayPid = stack.services.find((s) => s.name === "gateway")?.child.pid;
    const rssBefore = rssMb(gatewayPid);
    // Warm caches, connection pools and the JIT on every path first.
    for (const t of [direct(false), direct(true), viaGateway(false, plainKey), viaGateway(true, plainKey), viaGateway(false, ceilingKey)]) {
      await runLoad(t, 100, 2);
    }

    // CPU per request of every process on the box, so a row's latency can be read against who spent the cores.
    const cpuSubjects: CpuSubjects = {
      pids: {
        load: process.pid,
        fake: fake.pid,
        ...Object.fromEntries(stack.services.map((s) => [s.name, s.child.pid])),
      },
      commands: { postgres: "postgres", redis: "redis-server" },
    };
    const rows: Row[] = [];
    const measure = async (scenario: string, rate: number, target: LoadTarget) => {
      const before = sampleCpu(cpuSubjects);
      const result = await runLoad(target, rate, SECONDS);
      // Consumers work off the events of the last requests after the load ends; let them finish.
      await new Promise((r) => setTimeout(r, 1000));
      rows.push({ scenario, rate, result, cpuMsPerRequest: cpuPerRequest(before, sampleCpu(cpuSubjects), result.ok) });
    };
    for (const rate of RATES) {
      for (const stream of [false, true]) {
        const kind = stream ? "stream TTFT" : "non-stream";
        await measure(`direct ${kind}`, rate, direct(stream));
        await measure(`gateway ${kind} (key without ceiling)`, rate, viaGateway(stream, plainKey));
        await measure(`gateway ${kind} (key with hard ceiling)`, rate, viaGateway(stream, ceilingKey));
      }
    }
    const rssAfter = rssMb(gatewayPid);

    const fmt = (n: number) => n.toFixed(2).padStart(8);
    process.stdout.write(`\nRouter gateway overhead (${SECONDS}s per row, open-loop; ms)\n`);
    process.stdout.write(`${"scenario".padEnd(48)} ${"rps".padStart(5)} ${"ok".padStart(6)} ${"fail".padStart(5)} ${"p50".padStart(8)} ${"p90".padStart(8)} ${"p99".padStart(8)}\n`);
    for (const r of rows) {
      process.stdout.write(
        `${r.scenario.padEnd(48)} ${String(r.rate).padStart(5)} ${String(r.result.ok).padStart(6)} ${String(r.result.failed).padStart(5)} ${fmt(r.result.p50)} ${fmt(r.result.p90)} ${fmt(r.result.p99)}\n`,
      );
    }
    process.stdout.write(`\nCPU ms per request, by process\n`);
    for (const r of rows) {
      const parts = Object.entries(r.cpuMsPerRequest).map(([name, ms]) => `${name} ${ms.toFixed(2)}`);
      process.stdout.write(`  ${r.scenario.padEnd(46)} ${parts.join("  ")}\n`);
    }
    const added: Array<Record<string, unknown>> = [];
    for (const rate of RATES) {
      for (const kind of ["non-stream", "stream TTFT"]) {
        const base = rows.find((r) => r.rate === rate && r.scenario === `direct ${kind}`)?.result;
        for (const variant of ["key without ceiling", "key with hard ceiling"]) {
          const gw = rows.find((r) => r.rate === rate && r.scenario === `gateway ${kind} (${variant})`)?.result;
          if (base && gw) added.push({ rate, kind, variant, added_p50_ms: +(gw.p50 - base.p50).toFixed(2), added_p99_ms: +(gw.p99 - base.p99).toFixed(2) });
        }
      }
    }
    process.stdout.write(`\nAdded latency (gateway minus direct)\n`);
    for (const a of added) {
      process.stdout.write(`  ${String(a.rate).padStart(4)} rps  ${String(a.kind).padEnd(12)} ${String(a.variant).padEnd(22)} p50 +${a.added_p50_ms} ms  p99 +${a.added_p99_ms} ms\n`);
    }
    process.stdout.write(`\nGateway resident memory: ${rssBefore} MB at start, ${rssAfter} MB after the runs\n`);
    const dir = join(__dirname, "..", "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "overhead.json"), JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, rows, added, rssBefore, rssAfter }, null, 2));
  } finally {
    await stack.stop();
    fake.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
