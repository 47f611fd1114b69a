import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, gatewayClient, httpReady, startNodeProcess, waitFor, type ChildService, type JsonResponse } from "@router/testkit";
import { directChat, FAKE_PROVIDER_KEY, rssMb, startFake } from "./bench-processes";
import { cpuPerRequest, sampleCpu } from "./cpu";
import { leadIn, runLoad, type LoadResult, type LoadTarget } from "./load";
import { startPeer, type PeerGateway } from "./peer-gateway";
import { median, ROUNDS, showRounds } from "./rounds";

/**
 * `make bench-embedded`: the one-process default (`npm start`) on a new data directory against the
 * instant fake upstream, open-loop at each of BENCH_RATES (default 300,800) for BENCH_SECONDS
 * (default 10): the added latency over calling the fake directly, what was served at the rate, CPU
 * per request, and resident memory at first start, after a restart and after the load. Every row
 * BENCH_ROUNDS times (default 1), interleaved. BENCH_PEER=portkey measures Portkey's gateway the same
 * way in the same run, each of its rows right after npm start's (see peer-gateway.ts);
 * BENCH_PEER=passthrough the floor instead (one peer a run here).
 * BENCH_KEY_CEILING=soft gives the bench key a soft ceiling (the gateway asks the ledger's Admit on
 * every request), =hard a hard one (spend leases from the ledger); unset, no ceiling (no ledger call).
 */
const RATES = (process.env.BENCH_RATES ?? "300,800").split(",").map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? "10");
const PEER = process.env.BENCH_PEER;
const KEY_CEILING = process.env.BENCH_KEY_CEILING;
if (KEY_CEILING !== undefined && KEY_CEILING !== "soft" && KEY_CEILING !== "hard") {
  throw new Error(`BENCH_KEY_CEILING is soft, hard or unset, not ${KEY_CEILING}`);
}
const MAIN = join(__dirname, "..", "..", "services", "embedded", "dist", "main.js");
/**
 * The Node flags `npm start` runs the process with, read from the root package.json's start script
 * so the bench measures what a newcomer runs; BENCH_NODE_ARGS replaces them (e.g. "" for none).
 */
const NODE_ARGS =
  process.env.BENCH_NODE_ARGS !== undefined
    ? process.env.BENCH_NODE_ARGS.split(" ").filter(Boolean)
    : startScriptNodeArgs(join(__dirname, "..", "..", "package.json"));

function startScriptNodeArgs(packageJson: string): string[] {
  const start = (JSON.parse(readFileSync(packageJson, "utf8")) as { scripts: { start: string } }).scripts.start;
  // scripts/start.js builds what changed, then runs services/embedded/dist/main.js in the same node.
  const flags = /node ((?:--\S+ )*)(?:services\/embedded\/dist\/main|scripts\/start)\.js/.exec(start);
  if (!flags) throw new Error(`package.json's start script does not run scripts/start.js or services/embedded/dist/main.js with node: ${start}`);
  return (flags[1] ?? "").split(" ").filter(Boolean);
}

const KEY_LINE = /^\s+(rt-mgmt-\S+)\s*$/m;

function body(model: string, stream: boolean): string {
  return JSON.stringify({ model, stream, max_tokens: 64, messages: [{ role: "user", content: "Name one colour." }] });
}

/**
 * PGlite's own resident memory on `dir`, read by a process that opens nothing else
 * (bench/src/pglite-floor.ts), started with `nodeArgs`.
 */
function pgliteFloorMb(dir: string, nodeArgs: string[]): number {
  const out = execFileSync(process.execPath, [...nodeArgs, join(__dirname, "pglite-floor.js"), dir], { encoding: "utf8" });
  return Number(out.trim());
}

async function main(): Promise<void> {
  const fake = await startFake();
  const dataDir = mkdtempSync(join(tmpdir(), "router-bench-embedded-"));
  const port = await freePort();
  const direct = (stream: boolean): LoadTarget => directChat(fake, body("gpt-4o-mini", stream), stream);
  const start = () =>
    startNodeProcess(
      "router",
      MAIN,
      { PORT: String(port), ROUTER_DATA_DIR: dataDir, ROUTER_PROVIDER_OPENAI_BASE_URL: fake.url, LOG_LEVEL: "warn", METRICS_PORT: "0" },
      () => httpReady(`http://127.0.0.1:${port}/health`),
      120_000,
      NODE_ARGS,
    );
  let router: ChildService | undefined;
  let peer: PeerGateway | undefined;
  try {
    // The peer first: a failed install or a peer that does not forward stops the run before it starts.
    peer = PEER ? await startPeer(PEER, direct) : undefined;
    router = await start();
    const key = await waitFor(() => KEY_LINE.exec(router?.output() ?? "")?.[1], { what: "the printed management key" });
    await new Promise((r) => setTimeout(r, 2000));
    const firstStartMb = rssMb(router.child.pid);
    await router.stop();
    // With Node's defaults (the database alone, as a newcomer would measure it) and with npm start's flags.
    const floorMb = pgliteFloorMb(join(dataDir, "pg"), []);
    const floorSameFlagsMb = NODE_ARGS.length > 0 ? pgliteFloorMb(join(dataDir, "pg"), NODE_ARGS) : floorMb;
    router = await start();
    await new Promise((r) => setTimeout(r, 2000));
    const restartMb = rssMb(router.child.pid);
    const peerStartMb = peer ? rssMb(peer.service.child.pid) : null;

    const origin = `http://127.0.0.1:${port}`;
    const mgmt = gatewayClient(origin, key);
    await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: FAKE_PROVIDER_KEY });
    const ceiling = KEY_CEILING ? { limit: 1_000_000, limit_mode: KEY_CEILING, limit_reset: "monthly", include_byok_in_limit: true } : {};
    const created: JsonResponse = await mgmt.post("/v1/keys", { name: "bench", ...ceiling });
    const inference = (created.json as { data: { key: string } }).data.key;
    const embedded = (stream: boolean): LoadTarget => ({
      origin,
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: `Bearer ${inference}` },
      body: body("openai/gpt-4o-mini", stream),
      stream,
    });
    // What each row after the direct one measures: npm start, then the peer when asked for, in that order every time.
    const servers: Array<{ name: string; pid: number | undefined; target: (stream: boolean) => LoadTarget }> = [
      { name: "npm start", pid: router.child.pid, target: embedded },
      ...(peer ? [{ name: peer.label, pid: peer.service.child.pid, target: peer.target }] : []),
    ];
    for (const stream of [false, true]) {
      await runLoad(direct(stream), RATES[0] ?? 300, 4);
      for (const s of servers) await runLoad(s.target(stream), RATES[0] ?? 300, 4);
    }

    const subjects = { pids: { fake: fake.pid, load: process.pid, ...Object.fromEntries(servers.map((s) => [s.name, s.pid])) }, commands: {} };
    const added = new Map<string, { p50: number[]; p99: number[]; cpu: number[] }>();
    process.stdout.write(`\nThe one-process default${peer ? ` beside ${peer.label}` : ""} (${SECONDS}s per row, open-loop; ms)\n`);
    process.stdout.write(`${"row".padEnd(34)} ${"rps".padStart(5)} ${"ok".padStart(6)} ${"fail".padStart(5)} ${"p50".padStart(8)} ${"p99".padStart(8)} ${"added p50".padStart(10)} ${"added p99".padStart(10)}  ${peer ? "server" : "router"} CPU ms/req\n`);
    const f = (n: number) => n.toFixed(2).padStart(8);
    const line = (row: string, r: LoadResult, rest = "") =>
      process.stdout.write(`${row.padEnd(34)} ${String(r.rate).padStart(5)} ${String(r.ok).padStart(6)} ${String(r.failed).padStart(5)} ${f(r.p50)} ${f(r.p99)} ${rest}\n`);
    for (let round = 1; round <= ROUNDS; round++) {
      const suffix = ROUNDS > 1 ? ` #${round}` : "";
      for (const rate of RATES) {
        for (const stream of [false, true]) {
          const kind = stream ? "stream TTFT" : "non-stream";
          await leadIn(direct(stream), rate);
          const base = await runLoad(direct(stream), rate, SECONDS);
          line(`direct ${kind}${suffix}`, base);
          for (const s of servers) {
            // Each server sat idle through the rows before its own: measure it at the rate, not waking up.
            await leadIn(s.target(stream), rate);
            const before = sampleCpu(subjects);
            const via = await runLoad(s.target(stream), rate, SECONDS);
            const cpu = cpuPerRequest(before, sampleCpu(subjects), via.ok)[s.name] ?? Number.NaN;
            await new Promise((r) => setTimeout(r, 1000));
            line(`${s.name} ${kind}${suffix}`, via, `${(via.p50 - base.p50).toFixed(2).padStart(10)} ${(via.p99 - base.p99).toFixed(2).padStart(10)}  ${cpu.toFixed(2)}`);
            const entry = added.get(`${rate} ${kind} ${s.name}`) ?? { p50: [], p99: [], cpu: [] };
            entry.p50.push(+(via.p50 - base.p50).toFixed(2));
            entry.p99.push(+(via.p99 - base.p99).toFixed(2));
            entry.cpu.push(cpu);
            added.set(`${rate} ${kind} ${s.name}`, entry);
          }
        }
      }
    }
    if (peer || ROUNDS > 1) {
      process.stdout.write(`\nAdded latency over the direct call${ROUNDS > 1 ? `, median of ${ROUNDS} rounds [each round]` : ""}\n`);
      for (const rate of RATES) {
        for (const kind of ["non-stream", "stream TTFT"]) {
          for (const s of servers) {
            const a = added.get(`${rate} ${kind} ${s.name}`);
            if (!a) continue;
            process.stdout.write(`  ${String(rate).padStart(4)} rps  ${kind.padEnd(12)} ${s.name.padEnd(16)} p50 ${showRounds(a.p50)}  p99 ${showRounds(a.p99)}  CPU ${median(a.cpu).toFixed(2)} ms/req\n`);
          }
          const ours = added.get(`${rate} ${kind} npm start`);
          const theirs = peer && added.get(`${rate} ${kind} ${peer.label}`);
          if (peer && ours && theirs) {
            const verdict = median(ours.p50) <= median(theirs.p50) ? "yes" : "no";
            process.stdout.write(`  ${String(rate).padStart(4)} rps  ${kind.padEnd(12)} npm start adds no more than ${peer.label} at p50: ${verdict}\n`);
          }
        }
      }
    }
    process.stdout.write(`\nResident memory (MB): first start ${firstStartMb}, after a restart ${restartMb}, after the load ${rssMb(router.child.pid)}\n`);
    const above = (mb: number | null, floor: number) => (mb === null ? "?" : `${mb - floor >= 0 ? "+" : ""}${mb - floor}`);
    const floorLine = (label: string, floor: number) =>
      `The embedded database alone on the same directory, as configured here, ${label}: ${floor} MB (first start ${above(firstStartMb, floor)}, restart ${above(restartMb, floor)} over it)\n`;
    process.stdout.write(floorLine("with Node's defaults", floorMb));
    if (NODE_ARGS.length > 0) process.stdout.write(floorLine(`with ${NODE_ARGS.join(" ")}`, floorSameFlagsMb));
    if (peer) process.stdout.write(`${peer.label} resident memory (MB): before the load ${peerStartMb}, after the load ${rssMb(peer.service.child.pid)}\n`);
  } finally {
    await router?.stop();
    await peer?.service.stop();
    fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
