import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createPostgresDb } from "@router/db";
import { callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { startLedger } from "@router/ledger";
import { createLogger } from "@router/logging";
import { systemClock } from "@router/money";
import { ledger } from "@router/proto";
import { createTestDatabase, metricSample } from "@router/testkit";
import { timedDb } from "./timed-db";

/**
 * Load on one hot counter row: Admit at a fixed rate (open loop) on one key whose hard ceiling
 * counts BYOK spend, each admitted request settled a little later (a CloseHolds call with one
 * settlement: the ledger's closing path, which a served request's record on the bus also takes). The ledger (`startLedger`, with the pool size main.ts uses) runs on a fresh database,
 * in a child process as in deployment (LOAD_LEDGER=inline runs it in this process), reached over
 * real gRPC. Prints Admit and Settle round trips, Admit as the ledger itself times it (its
 * `ledger_admit_duration_seconds` histogram, so bucket bounds), the ledger's time in Postgres per
 * call, its CPU, and checks that the counters equal the spend. Not a test: it asserts nothing.
 *
 *   npx tsc -b services/ledger/bench && node services/ledger/bench/dist/admit-load.js
 *
 * LOAD_RATE (300/s), LOAD_SECONDS (10, after LOAD_WARMUP_SECONDS 2), LOAD_SETTLE_DELAY_MS (5;
 * negative: never settle), LOAD_KEYS (1: spread over more counter rows to compare), LOAD_POOL_MAX
 * (10), LOAD_CPU_BURNERS (0: busy processes standing in for the rest of `make bench`),
 * LOAD_CLOSING_INTERVAL_MS (the ledger's default), LOAD_LEDGER, LOAD_NODE_ARGS (flags for the
 * ledger process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), LOAD_BUDGETS=1 (the requests' workspace
 * and agent have budgets too, never reached: four counter rows per request, as a key of a budgeted
 * workspace naming a budgeted agent).
 */
const RATE = Number(process.env.LOAD_RATE ?? "300");
const SECONDS = Number(process.env.LOAD_SECONDS ?? "10");
const WARMUP_SECONDS = Number(process.env.LOAD_WARMUP_SECONDS ?? "2");
const SETTLE_DELAY_MS = Number(process.env.LOAD_SETTLE_DELAY_MS ?? "5");
const KEYS = Number(process.env.LOAD_KEYS ?? "1");
const POOL_MAX = Number(process.env.LOAD_POOL_MAX ?? "10");
const CPU_BURNERS = Number(process.env.LOAD_CPU_BURNERS ?? "0");
const INLINE = process.env.LOAD_LEDGER === "inline";
const CLOSING_INTERVAL_MS = process.env.LOAD_CLOSING_INTERVAL_MS ? Number(process.env.LOAD_CLOSING_INTERVAL_MS) : undefined;
const BUDGETS = process.env.LOAD_BUDGETS === "1";
const WORKSPACE = "ws_load";
const AGENT = "load-agent";

const USD = 1_000_000_000n;
const WORST_CASE = USD / 1000n;
const LIST_COST = 12_345n;

interface Run {
  admitMs: number[];
  settleMs: number[];
  failed: number;
  refused: number;
  admitted: number;
  settled: number;
}

/** What the ledger's side measured while loaded. */
interface LedgerReport {
  /** Admit as the ledger times it (`ledger_admit_duration_seconds`): calls at or under each `le`. */
  admitBuckets: Array<[le: string, count: number]>;
  /** Postgres time per statement (a transaction counts once, whole). */
  dbMs: Array<[string, number[]]>;
  cpuPercent: number;
}

interface LedgerUnderTest {
  grpcPort: number;
  resetMeasurements(): Promise<void>;
  report(): Promise<LedgerReport>;
  stop(): Promise<void>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)] ?? Number.NaN;
}

function summary(label: string, values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2).padStart(7);
  const max = s[s.length - 1] ?? Number.NaN;
  return `${label.padEnd(22)} n=${String(s.length).padStart(5)}  p50 ${f(percentile(s, 50))}  p90 ${f(percentile(s, 90))}  p99 ${f(percentile(s, 99))}  max ${f(max)} ms`;
}

/** "p50 <= 1 ms, p99 <= 5 ms; <= 1 ms 61%, <= 5 ms 99.2%" from cumulative histogram buckets. */
function serverSide(buckets: Array<[string, number]>): string {
  const total = buckets.find(([le]) => le === "+Inf")?.[1] ?? 0;
  if (total === 0) return "not measured";
  const ms = (le: string | undefined) => (le === undefined || le === "+Inf" ? le ?? "?" : String(Number(le) * 1000));
  const bound = (p: number) => ms(buckets.find(([, n]) => n >= (p / 100) * total)?.[0]);
  const share = (msBound: number) => (100 * (buckets.find(([le]) => Number(le) * 1000 === msBound)?.[1] ?? 0)) / total;
  return (
    `n=${total}  p50 <= ${bound(50)} ms, p90 <= ${bound(90)} ms, p99 <= ${bound(99)} ms;  ` +
    `<= 1 ms ${share(1).toFixed(1)}%, <= 5 ms ${share(5).toFixed(1)}%`
  );
}

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const began = process.hrtime.bigint();
const progress = (what: string) => process.stderr.write(`[${(elapsedMs(began) / 1000).toFixed(1)}s] ${what}\n`);

/** Starts the ledger in this process on `url`; the measurements are taken here. */
async function startLedgerHere(url: string): Promise<LedgerUnderTest> {
  const db = createPostgresDb({ url, schema: "ledger", max: POOL_MAX, applicationName: "router-ledger" });
  const timed = timedDb(db);
  const app = await startLedger({
    db: timed.db,
    log: createLogger({ level: "warn" }),
    clock: systemClock,
    grpcPort: 0,
    closingIntervalMs: CLOSING_INTERVAL_MS,
    metricsPort: 0,
  });
  const admitBuckets = async (): Promise<Map<string, number>> => {
    if (app.metricsPort === undefined) return new Map();
    const text = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    const bounds = [...text.matchAll(/^ledger_admit_duration_seconds_bucket\{le="([^"]+)"/gm)].map((m) => m[1] ?? "");
    return new Map(bounds.map((le) => [le, metricSample(text, "ledger_admit_duration_seconds_bucket", { le })]));
  };
  let bucketsFrom = await admitBuckets();
  let cpuFrom = process.cpuUsage();
  let since = process.hrtime.bigint();
  return {
    grpcPort: app.grpcPort,
    async resetMeasurements() {
      timed.samples.clear();
      bucketsFrom = await admitBuckets();
      cpuFrom = process.cpuUsage();
      since = process.hrtime.bigint();
    },
    async report() {
      const cpu = process.cpuUsage(cpuFrom);
      const buckets = [...(await admitBuckets())].map(([le, n]): [string, number] => [le, n - (bucketsFrom.get(le) ?? 0)]);
      return {
        admitBuckets: buckets,
        dbMs: [...timed.samples],
        cpuPercent: (cpu.user + cpu.system) / 10 / elapsedMs(since),
      };
    },
    async stop() {
      await app.close();
      await db.close();
    },
  };
}

type ParentMessage = { kind: "reset" } | { kind: "report" } | { kind: "stop" };
type ChildMessage = { kind: "started"; grpcPort: number } | { kind: "report"; report: LedgerReport } | { kind: "done" };

/** The child side of LOAD_LEDGER=process: runs the ledger and answers the parent's messages. */
async function serveLedgerAsChild(url: string): Promise<void> {
  const send = (m: ChildMessage) => process.send?.(m);
  // The load process is gone (it failed or was stopped): nothing else will stop this one.
  process.on("disconnect", () => process.exit(0));
  const here = await startLedgerHere(url);
  process.on("message", (m: ParentMessage) => {
    const answer = async () => {
      if (m.kind === "reset") await here.resetMeasurements();
      if (m.kind === "report") return send({ kind: "report", report: await here.report() });
      if (m.kind === "stop") {
        await here.stop();
        send({ kind: "done" });
        return;
      }
      send({ kind: "done" });
    };
    void answer();
  });
  send({ kind: "started", grpcPort: here.grpcPort });
}

async function startLedgerChild(url: string): Promise<LedgerUnderTest & { child: ChildProcess }> {
  const execArgv = [...process.execArgv, ...(process.env.LOAD_NODE_ARGS?.split(" ").filter(Boolean) ?? [])];
  const child = fork(__filename, ["ledger", url], { stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv });
  const next = () =>
    new Promise<ChildMessage>((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`the ledger process exited (${code})`)));
    });
  const ask = async (m: ParentMessage) => {
    const answer = next();
    child.send(m);
    return answer;
  };
  const started = await next();
  if (started.kind !== "started") throw new Error(`the ledger process said ${started.kind}`);
  return {
    child,
    grpcPort: started.grpcPort,
    async resetMeasurements() {
      await ask({ kind: "reset" });
    },
    async report() {
      const m = await ask({ kind: "report" });
      if (m.kind !== "report") throw new Error(`the ledger process said ${m.kind}`);
      return m.report;
    },
    async stop() {
      await ask({ kind: "stop" });
      child.disconnect();
    },
  };
}

async function drive(target: LedgerUnderTest): Promise<{ warm: Run; run: Run; counted: bigint }> {
  const client = new ledger.LedgerServiceClient(`127.0.0.1:${target.grpcPort}`, insecure(), CLIENT_OPTIONS);
  const call = { deadlineMs: 10_000, service: "ledger" };
  const keys = Array.from(
    { length: KEYS },
    (): ledger.Ceiling => ({
      subjectKind: "key",
      subjectId: `key_${randomBytes(6).toString("hex")}`,
      // Never reached: every Admit takes the whole path (lock, compare, reserve).
      limitNanodollars: 1_000_000n * USD,
      window: ledger.Window.WINDOW_MONTHLY,
      mode: ledger.LimitMode.LIMIT_MODE_HARD,
      includeByok: true,
      subjectName: "",
    }),
  );
  let sent = 0;

  const oneRequest = async (run: Run, settles: Promise<void>[]): Promise<void> => {
    const requestId = `gen-${randomBytes(12).toString("hex")}`;
    const scope = BUDGETS ? { workspaceId: WORKSPACE, agent: AGENT } : { workspaceId: "", agent: "" };
    const request = ledger.AdmitRequest.fromPartial({
      requestId,
      orgId: "org_load",
      ...scope,
      ceilings: [keys[sent++ % keys.length] as ledger.Ceiling],
      worstCaseNanodollars: WORST_CASE,
      isByok: true,
    });
    const start = process.hrtime.bigint();
    const answer = await callUnary(client, client.admit, request, call);
    run.admitMs.push(elapsedMs(start));
    if (!answer.admitted) {
      run.refused++;
      return;
    }
    run.admitted++;
    if (SETTLE_DELAY_MS < 0) return;
    const settle = async () => {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_DELAY_MS));
      const s = process.hrtime.bigint();
      // With the request, as the gateway sends it: the ledger records it per workspace and agent.
      const cost = ledger.SettleRequest.fromPartial({
        holdId: answer.holdId,
        listCostNanodollars: LIST_COST,
        orgId: "org_load",
        requestId,
        ...scope,
        isByok: true,
      });
      await callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial({ settlements: [cost] }), call);
      run.settleMs.push(elapsedMs(s));
      run.settled++;
    };
    // Counted as it fails, so a failure long before the run ends is never an unhandled rejection.
    settles.push(settle().catch(() => void run.failed++));
  };

  const load = async (seconds: number): Promise<Run> => {
    const run: Run = { admitMs: [], settleMs: [], failed: 0, refused: 0, admitted: 0, settled: 0 };
    const admits: Promise<void>[] = [];
    const settles: Promise<void>[] = [];
    const total = Math.round(RATE * seconds);
    const intervalNs = 1e9 / RATE;
    const begin = process.hrtime.bigint();
    for (let i = 0; i < total; i++) {
      const due = begin + BigInt(Math.round(i * intervalNs));
      const waitMs = Number(due - process.hrtime.bigint()) / 1e6;
      if (waitMs > 1) await new Promise((r) => setTimeout(r, waitMs));
      admits.push(oneRequest(run, settles).catch(() => void run.failed++));
    }
    await Promise.all(admits);
    await Promise.all(settles);
    return run;
  };

  try {
    const warm = await load(WARMUP_SECONDS);
    await target.resetMeasurements();
    progress("warmed up");
    const run = await load(SECONDS);
    progress("load done");
    const usage = (await callUnary(client, client.usage, { ceilings: keys }, call)).usage;
    return { warm, run, counted: usage.reduce((sum, u) => sum + u.usedNanodollars, 0n) };
  } finally {
    client.close();
  }
}

/** The budgets of LOAD_BUDGETS=1, straight into the ledger's tables (its migrations have run). */
async function insertBudgets(url: string): Promise<void> {
  const db = createPostgresDb({ url, schema: "ledger", max: 1 });
  try {
    const never = (1_000_000n * USD).toString();
    await db.query(
      `INSERT INTO workspace_budgets VALUES ('org_load', $1, 'monthly', $2::bigint, true, now(), now())`,
      [WORKSPACE, never],
    );
    await db.query(
      `INSERT INTO agent_budgets VALUES ('org_load', $1, '', 'monthly', $2::bigint, true, true, now(), now()),
                                        ('org_load', $1, $3, 'daily', $2::bigint / 10, true, true, now(), now())`,
      [AGENT, never, WORKSPACE],
    );
  } finally {
    await db.close();
  }
}

/** Spins one core until killed, or until its parent is gone (the loop never yields to an event). */
function burn(): never {
  const parent = process.ppid;
  for (let i = 0; ; i++) {
    Math.sqrt(Math.random());
    if (i % 10_000_000 === 0 && process.ppid !== parent) process.exit(0);
  }
}

async function main(): Promise<void> {
  const burners = Array.from({ length: CPU_BURNERS }, () => fork(__filename, ["burn"], { stdio: "ignore" }));
  const database = await createTestDatabase("ledgerload");
  progress("database created");
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const b of burners) b.kill("SIGTERM");
    await database.drop();
  };
  process.once("SIGINT", () => void cleanUp().finally(() => process.exit(130)));
  try {
    const target = INLINE ? await startLedgerHere(database.url) : await startLedgerChild(database.url);
    progress("ledger started");
    if (BUDGETS) await insertBudgets(database.url);
    const { warm, run, counted } = await drive(target);
    const ledgerSide = await target.report();
    await target.stop();
    progress("ledger stopped");

    const settledOrOpen = (r: Run) =>
      BigInt(r.settled) * LIST_COST + (SETTLE_DELAY_MS < 0 ? BigInt(r.admitted) * WORST_CASE : 0n);
    const expected = settledOrOpen(warm) + settledOrOpen(run);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(
      `ledger load: ${RATE} Admit/s on ${KEYS === 1 ? "one counter row" : `${KEYS} counter rows`}, ` +
        `${SETTLE_DELAY_MS < 0 ? "no Settle" : `Settle ${SETTLE_DELAY_MS} ms after each`}, ${SECONDS} s, ` +
        `ledger ${INLINE ? "in the load process" : "in its own process"}, pool ${POOL_MAX}, ${CPU_BURNERS} CPU burner(s)`,
    );
    out("round trip (gRPC on loopback):");
    out(`  ${summary("Admit", run.admitMs)}`);
    out(`  ${summary("Settle", run.settleMs)}`);
    out(`  failed ${run.failed}, refused ${run.refused}`);
    out(`inside the ledger, Admit: ${serverSide(ledgerSide.admitBuckets)}`);
    out("inside the ledger, Postgres time per call (pool wait included):");
    for (const [label, ms] of ledgerSide.dbMs) out(`  ${summary(label, ms)}`);
    out(`${INLINE ? "load and ledger" : "ledger"} process CPU: ${ledgerSide.cpuPercent.toFixed(0)}% of one core`);
    out(`counted ${counted}, expected ${expected}: ${counted === expected ? "exact" : "MISMATCH"}`);
  } finally {
    await cleanUp();
  }
}

function fail(err: unknown): never {
  process.stderr.write(`load failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}

const [mode, url] = process.argv.slice(2);
if (mode === "burn") burn();
else if (mode === "ledger" && url) serveLedgerAsChild(url).catch(fail);
// Exits once done even if a handle (a pool, a channel) would keep the process alive.
else main().then(() => process.exit(0), fail);
