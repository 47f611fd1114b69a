import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, gatewayClient, httpReady, startNodeProcess, waitFor, type JsonResponse } from "@router/testkit";
import { rssMb, startFake } from "./bench-processes";
import { cpuPerRequest, sampleCpu } from "./cpu";
import { runLoad, type LoadTarget } from "./load";

/**
 * `make bench-embedded`: the one-process default (`npm start`) on a new data directory against the
 * instant fake upstream, open-loop at each of BENCH_RATES (default 300,800) for BENCH_SECONDS
 * (default 10): the added latency over calling the fake directly, what was served at the rate, CPU
 * per request, and resident memory at first start, after a restart and after the load.
 */
const RATES = (process.env.BENCH_RATES ?? "300,800").split(",").map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? "10");
const MAIN = join(__dirname, "..", "..", "services", "embedded", "dist", "main.js");
const KEY_LINE = /^\s+(rt-mgmt-\S+)\s*$/m;

function body(model: string, stream: boolean): string {
  return JSON.stringify({ model, stream, max_tokens: 64, messages: [{ role: "user", content: "Name one colour." }] });
}

async function main(): Promise<void> {
  const fake = await startFake();
  const dataDir = mkdtempSync(join(tmpdir(), "router-bench-embedded-"));
  const port = await freePort();
  const start = () =>
    startNodeProcess(
      "router",
      MAIN,
      { PORT: String(port), ROUTER_DATA_DIR: dataDir, ROUTER_PROVIDER_OPENAI_BASE_URL: fake.url, LOG_LEVEL: "warn", METRICS_PORT: "0" },
      () => httpReady(`http://127.0.0.1:${port}/health`),
      120_000,
    );
  let router = await start();
  try {
    const key = await waitFor(() => KEY_LINE.exec(router.output())?.[1], { what: "the printed management key" });
    await new Promise((r) => setTimeout(r, 2000));
    const firstStartMb = rssMb(router.child.pid);
    await router.stop();
    router = await start();
    await new Promise((r) => setTimeout(r, 2000));
    const restartMb = rssMb(router.child.pid);

    const origin = `http://127.0.0.1:${port}`;
    const mgmt = gatewayClient(origin, key);
    await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-bench-000000000000" });
    const created: JsonResponse = await mgmt.post("/v1/keys", { name: "bench" });
    const inference = (created.json as { data: { key: string } }).data.key;
    const direct = (stream: boolean): LoadTarget => ({
      origin: fake.origin,
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench-000000000000" },
      body: body("gpt-4o-mini", stream),
      stream,
    });
    const embedded = (stream: boolean): LoadTarget => ({
      origin,
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: `Bearer ${inference}` },
      body: body("openai/gpt-4o-mini", stream),
      stream,
    });
    for (const stream of [false, true]) {
      await runLoad(direct(stream), RATES[0] ?? 300, 4);
      await runLoad(embedded(stream), RATES[0] ?? 300, 4);
    }

    const subjects = { pids: { router: router.child.pid, fake: fake.pid, load: process.pid }, commands: {} };
    process.stdout.write(`\nThe one-process default (${SECONDS}s per row, open-loop; ms)\n`);
    process.stdout.write(`${"row".padEnd(34)} ${"rps".padStart(5)} ${"ok".padStart(6)} ${"fail".padStart(5)} ${"p50".padStart(8)} ${"p99".padStart(8)} ${"added p50".padStart(10)} ${"added p99".padStart(10)}  router CPU ms/req\n`);
    for (const rate of RATES) {
      for (const stream of [false, true]) {
        const kind = stream ? "stream TTFT" : "non-stream";
        const base = await runLoad(direct(stream), rate, SECONDS);
        const before = sampleCpu(subjects);
        const via = await runLoad(embedded(stream), rate, SECONDS);
        const cpu = cpuPerRequest(before, sampleCpu(subjects), via.ok).router ?? Number.NaN;
        await new Promise((r) => setTimeout(r, 1000));
        const f = (n: number) => n.toFixed(2).padStart(8);
        for (const [row, r] of [[`direct ${kind}`, base], [`npm start ${kind}`, via]] as const) {
          const added = r === via ? `${(via.p50 - base.p50).toFixed(2).padStart(10)} ${(via.p99 - base.p99).toFixed(2).padStart(10)}  ${cpu.toFixed(2)}` : "";
          process.stdout.write(`${row.padEnd(34)} ${String(rate).padStart(5)} ${String(r.ok).padStart(6)} ${String(r.failed).padStart(5)} ${f(r.p50)} ${f(r.p99)} ${added}\n`);
        }
      }
    }
    process.stdout.write(`\nResident memory (MB): first start ${firstStartMb}, after a restart ${restartMb}, after the load ${rssMb(router.child.pid)}\n`);
  } finally {
    await router.stop();
    fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
