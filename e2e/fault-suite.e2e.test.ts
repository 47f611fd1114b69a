import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import {
  freePort,
  gatewayClient,
  httpReady,
  startFakeOpenAi,
  startNodeProcess,
  startStack,
  TEST_POSTGRES_ADMIN_URL,
  waitFor,
  type ChildService,
  type FakeReply,
  type FakeUpstream,
  type Stack,
} from "@router/testkit";
import { settledAccount, usdOf as usd, type Account } from "./faults/accounting";
import { deepBodies, DEEP } from "./faults/deep-bodies";
import { failureCounts, runLoad, servedIds, type Outcome } from "./faults/load";
import { startOwnRedis, type OwnRedis } from "./faults/own-redis";
import { BACKEND_SERVICES, restartService, signalService, type BackendService } from "./faults/services";

/** The load of every case: open loop, every other request streamed. */
const PER_SECOND = 20;
const LOAD_MS = 6_000;
const FAULT_AT_MS = 1_500;
/**
 * Short spend leases and holds, so what a killed gateway held is explained within seconds; not
 * shorter: at 3 s, renewals delayed on a busy box let the sweep record requests of a live gateway as
 * lost (activity then keeps the worst case while the ledger charges the actual cost).
 */
const LEASE_TTL_MS = 10_000;
const SWEEP_MS = 500;
/** How long a case waits for every served request to be recorded and settled before it fails. */
const SETTLE_MS = 30_000;

/** Streams of about a second; answers after 100 ms. */
const SHORT_STREAMS: FakeReply = { chunks: words(10), chunkDelayMs: 100, headersDelayMs: 100, usage: { prompt: 40, completion: 10 } };
/** Streams of about three seconds, so a gateway stopped part way through the load has many in flight. */
const LONG_STREAMS: FakeReply = { chunks: words(20), chunkDelayMs: 150, headersDelayMs: 100, usage: { prompt: 40, completion: 20 } };

function words(n: number): string[] {
  return Array.from({ length: n }, (_v, i) => `w${i} `);
}

const EMBEDDED_MAIN = join(__dirname, "..", "services", "embedded", "dist", "main.js");
const MGMT_KEY_LINE = /^\s+(rt-mgmt-\S+)\s*$/m;
/** The suite polls activity's export and the key list once a second per case. */
const RATE_LIMITS = JSON.stringify({ management: { per_minute: 100_000, per_day: 1_000_000 }, activity_export: { per_minute: 10_000 } });

/** One line of the printed table. */
interface Row {
  name: string;
  requests: number;
  served: number;
  recorded: string;
  settled: string;
  lost: number;
  /** Requests in flight at the fault that were not served (cut, or refused as the process went). */
  cut: number;
  /** From the fault to the start of the last request that failed (0: none failed). */
  failingMs: number;
  /** From the last answer to when every served request was recorded and the usage equalled the recorded cost. */
  settledMs: string;
  failures: string;
}

const table: Row[] = [];

function printTable(): void {
  const head = ["case", "requests", "served", "recorded", "settled", "lost", "cut", "failing s", "settled s", "not served"];
  const lines = table.map((r) => [r.name, String(r.requests), String(r.served), r.recorded, r.settled, String(r.lost), String(r.cut), (r.failingMs / 1000).toFixed(1), r.settledMs, r.failures]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const out = [fmt(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(fmt)];
  const legend =
    "cut: in flight at the fault and not served; failing s: from the fault to the start of the last request that was not served; " +
    "settled s: from the last answer until every served request was recorded once and the key's usage equalled the recorded cost";
  process.stdout.write(`\nfault suite (${process.env.ROUTER_BUS === "kafka" ? "Kafka" : "Redis Streams"}), ${PER_SECOND} req/s, half streamed:\n${out.join("\n")}\n${legend}\n\n`);
}

/** The row of one case, from its load and its account. */
function rowOf(name: string, outcomes: Outcome[], faultAt: number, acc: Account): Row {
  const failed = outcomes.filter((o) => !o.served);
  const lastFailed = Math.max(faultAt, ...failed.map((o) => o.startedAt));
  const counts = failureCounts(outcomes);
  return {
    name,
    requests: outcomes.length,
    served: servedIds(outcomes).length,
    recorded: acc.duplicated.length > 0 ? `${acc.recorded} (${acc.duplicated.length} twice)` : `${acc.recorded} of ${acc.rows} rows`,
    settled: acc.usageNanos === acc.recordedNanos ? "yes" : `no: usage ${usd(acc.usageNanos)}, recorded ${usd(acc.recordedNanos)}`,
    lost: acc.missing.length,
    cut: outcomes.filter((o) => !o.served && o.startedAt < faultAt && o.endedAt >= faultAt).length,
    failingMs: lastFailed - faultAt,
    settledMs: acc.holds ? (Math.max(0, acc.at - Math.max(...outcomes.map((o) => o.endedAt))) / 1000).toFixed(1) : "never",
    failures: Object.entries(counts).map(([k, n]) => `${n}× ${k}`).join("; "),
  };
}

/** The invariants, asserted after the row is in the table. */
function expectNothingLost(outcomes: Outcome[], acc: Account): void {
  if (acc.usageNanos !== acc.recordedNanos && acc.chargedUnserved.length > 0) {
    const charged = acc.chargedUnserved.map((r) => `  ${r.id} ${r.status} ${r.errorCode} ${usd(r.listNanos)}`).join("\n");
    process.stdout.write(`rows of requests not served that carry a cost:\n${charged}\n`);
  }
  if (acc.usageNanos !== acc.recordedNanos) process.stdout.write(`served rows by status and list cost: ${JSON.stringify(acc.servedCosts)}\n`);
  expect(servedIds(outcomes).length).toBeGreaterThan(0);
  expect({ missing: acc.missing, duplicated: acc.duplicated, usageNanos: acc.usageNanos }).toEqual({ missing: [], duplicated: [], usageNanos: acc.recordedNanos });
}

/**
 * The fault suite: each case runs load against the stack (20 requests a second, half streamed),
 * injects one fault part way through, and counts what was served, what activity recorded and what
 * the ledger charged. Every served request is recorded exactly once, the key's usage equals the
 * recorded cost to the nanodollar, and every process is still running at the end (a dropped
 * connection must never kill one). One stack, on a Redis of its own that the suite can kill.
 */
describe("fault suite", () => {
  let openai: FakeUpstream;
  let redis: OwnRedis;
  let stack: Stack;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    redis = await startOwnRedis();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: {
        REDIS_URL: redis.url,
        LEDGER_LEASE_TTL_MS: String(LEASE_TTL_MS),
        LEDGER_HOLD_TTL_MS: String(LEASE_TTL_MS),
        LEDGER_SWEEP_INTERVAL_MS: String(SWEEP_MS),
        GATEWAY_HOLD_RENEW_MS: "500",
        GATEWAY_DRAIN_GRACE_MS: "10000",
        GATEWAY_RATE_LIMITS: RATE_LIMITS,
      },
      // Eight processes starting at once on a busy two-core box can take longer than the default.
      startTimeoutMs: 60_000,
    });
  }, 150_000);

  afterAll(async () => {
    printTable();
    await stack?.stop();
    await redis?.stop();
    await openai?.close();
  }, 60_000);

  /** An organisation of its own per case, with a BYOK key under a hard ceiling (spend leases). */
  async function tenant(name: string, gatewayUrl = stack.gatewayUrl) {
    const { managementKey } = await stack.createOrg(name);
    return keyOf(gatewayUrl, managementKey, name);
  }

  /** Each process of the stack that is no longer running; each is started again, so later cases run on a whole stack. */
  async function crashedServices(): Promise<string[]> {
    const dead = stack.services.filter((s) => s.child.exitCode !== null || s.child.signalCode !== null).map((s) => s.name);
    for (const name of dead) {
      if ((BACKEND_SERVICES as readonly string[]).includes(name)) await restartService(stack, name as BackendService);
    }
    return dead.filter((n) => n.startsWith("gateway-replica") === false);
  }

  /** Runs one case: load on `gatewayUrl`, `fault` part way through, then the account and the row. */
  async function faultCase(
    name: string,
    fault: () => Promise<void>,
    opts: { reply?: FakeReply; loadMs?: number; gatewayUrl?: string; tenantOf?: { mgmtKey: string; key: string; hash: string }; settleMs?: number; stableMs?: number } = {},
  ) {
    openai.setDefault(opts.reply ?? SHORT_STREAMS);
    const t = opts.tenantOf ?? (await tenant(name));
    let faultAt = 0;
    const { outcomes, faultError } = await runLoad({
      gatewayUrl: opts.gatewayUrl ?? stack.gatewayUrl,
      key: t.key,
      perSecond: PER_SECOND,
      durationMs: opts.loadMs ?? LOAD_MS,
      faultAtMs: FAULT_AT_MS,
      fault: async () => {
        faultAt = Date.now();
        await fault();
      },
    });
    if (faultError) throw faultError;
    const acc = await settledAccount(stack.gatewayUrl, t.mgmtKey, t.hash, servedIds(outcomes), { timeoutMs: opts.settleMs ?? SETTLE_MS, stableMs: opts.stableMs });
    const crashed = await crashedServices();
    const row = rowOf(name, outcomes, faultAt, acc);
    if (crashed.length > 0) row.failures = [`CRASHED: ${crashed.join(", ")}`, row.failures].filter(Boolean).join("; ");
    table.push(row);
    return { outcomes, faultAt, acc, crashed };
  }

  /** The invariants of a case, asserted after its row is in the table. */
  function expectWhole(c: { outcomes: Outcome[]; acc: Account; crashed: string[] }): void {
    expectNothingLost(c.outcomes, c.acc);
    expect(c.crashed).toEqual([]);
  }

  it("serves, records and settles everything with no fault (the baseline)", async () => {
    expectWhole(await faultCase("no fault", async () => undefined));
  }, 120_000);

  it.each(BACKEND_SERVICES)("SIGKILL %s under load, then start it again", async (service) => {
    expectWhole(
      await faultCase(`SIGKILL ${service}`, async () => {
        await signalService(stack, service, "SIGKILL");
        await restartService(stack, service);
      }),
    );
  }, 120_000);

  it("SIGKILL Redis under load, then start it again from its append-only file", async () => {
    expectWhole(
      await faultCase("SIGKILL Redis (AOF)", async () => {
        await redis.kill();
        await new Promise((r) => setTimeout(r, 1_000));
        await redis.start();
      }),
    );
  }, 120_000);

  it("terminates Postgres's backends of the stack's database under load, twice", async () => {
    const database = new URL(stack.env.DATABASE_URL ?? "").pathname.slice(1);
    const terminate = async () => {
      const admin = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
      await admin.connect();
      try {
        const res = await admin.query<{ terminated: boolean }>(
          "SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
          [database],
        );
        return res.rows.filter((r) => r.terminated).length;
      } finally {
        await admin.end();
      }
    };
    let terminated = 0;
    const c = await faultCase("terminate Postgres backends", async () => {
      terminated += await terminate();
      await new Promise((r) => setTimeout(r, 1_000));
      terminated += await terminate();
    });
    expect(terminated).toBeGreaterThan(0);
    expectWhole(c);
  }, 120_000);

  /** A replica with its own outbox, so the stack's own gateway keeps answering the suite's reads. */
  async function replicaCase(name: string, signal: NodeJS.Signals, opts: { settleMs: number; stableMs?: number }) {
    const url = await stack.startGatewayReplica();
    const replica = stack.services.at(-1);
    if (!replica) throw new Error("no replica");
    const t = await tenant(name, url);
    // The load ends as the gateway is stopped, with about 15 streams of 3 s each in flight.
    const c = await faultCase(name, () => signalService(stack, replica.name, signal), {
      reply: LONG_STREAMS,
      loadMs: FAULT_AT_MS + 100,
      gatewayUrl: url,
      tenantOf: t,
      ...opts,
    });
    expect(c.outcomes.filter((o) => o.streamed && o.startedAt < c.faultAt && o.endedAt > c.faultAt).length).toBeGreaterThanOrEqual(10);
    expectWhole(c);
  }

  it("SIGTERM a gateway with streams in flight: they finish within the grace, and each is recorded and settled", async () => {
    await replicaCase("SIGTERM gateway, streams in flight", "SIGTERM", { settleMs: SETTLE_MS });
  }, 120_000);

  it("SIGKILL a gateway with streams in flight: what its leases covered is recorded as lost when they expire", async () => {
    // Held through the leases' expiry: a balance that only looks right before it is not settled.
    await replicaCase("SIGKILL gateway, streams in flight", "SIGKILL", { settleMs: LEASE_TTL_MS + SETTLE_MS, stableMs: LEASE_TTL_MS + 2 * SWEEP_MS + 1_000 });
  }, 120_000);

  it("answers a body nested 100,000 deep in each JSON field of each ingress with a 400 naming the field, and never asks a provider", async () => {
    const t = await tenant("deep JSON");
    const before = openai.requests.length;
    const answers: Array<{ where: string; status: number; names: boolean; text: string }> = [];
    for (const b of deepBodies()) {
      const res = await fetch(`${stack.gatewayUrl}${b.path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: b.body,
      }).catch((err: unknown) => err as Error);
      const where = `${b.path} ${b.at}`;
      if (res instanceof Error) {
        answers.push({ where, status: 0, names: false, text: res.message });
        continue;
      }
      const text = await res.text();
      answers.push({ where, status: res.status, names: text.includes(b.field), text: text.slice(0, 160) });
    }
    const asked = openai.requests.length - before;
    const crashed = await crashedServices();
    const refused = answers.filter((a) => a.status === 400 && a.names).length;
    const fivexx = answers.filter((a) => a.status >= 500 || a.status === 0);
    table.push({
      name: `JSON nested ${DEEP.toLocaleString("en")} deep`,
      requests: answers.length,
      served: 0,
      recorded: "-",
      settled: "-",
      lost: 0,
      cut: 0,
      failingMs: 0,
      settledMs: "-",
      failures: `${refused} × 400 naming the field; ${fivexx.length} × 5xx; provider asked ${asked}×${crashed.length ? `; CRASHED: ${crashed.join(", ")}` : ""}`,
    });
    const wrong = answers.filter((a) => !(a.status === 400 && a.names));
    if (wrong.length > 0) process.stdout.write(`deep JSON answered wrongly:\n${wrong.map((a) => `  ${a.where}: ${a.status} ${a.text}`).join("\n")}\n`);
    expect(wrong.map((a) => `${a.where}: ${a.status}`)).toEqual([]);
    expect(asked).toBe(0);
    expect(crashed).toEqual([]);
  }, 120_000);

  describe("the one-process default (npm start)", () => {
    let dataDir: string;
    let port: number;
    let proc: ChildService | undefined;

    const start = async () =>
      startNodeProcess(
        "router",
        EMBEDDED_MAIN,
        {
          PORT: String(port),
          ROUTER_DATA_DIR: dataDir,
          ROUTER_PROVIDER_OPENAI_BASE_URL: openai.url,
          LOG_LEVEL: "warn",
          METRICS_PORT: "0",
          GATEWAY_RATE_LIMITS: RATE_LIMITS,
        },
        () => httpReady(`http://127.0.0.1:${port}/health`),
        // Its first start creates eight embedded databases: minutes on a busy two-core box.
        180_000,
      );

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "router-fault-embedded-"));
      port = await freePort();
    });

    afterAll(async () => {
      await proc?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("SIGINT with streams in flight, then start it again: every served request is in activity and settled", async () => {
      proc = await start();
      const first = proc;
      const mgmtKey = await waitFor(() => MGMT_KEY_LINE.exec(first.output())?.[1], { what: "the printed management key" });
      const base = `http://127.0.0.1:${port}`;
      const t = await keyOf(base, mgmtKey, "npm start");
      openai.setDefault(LONG_STREAMS);
      let faultAt = 0;
      let exitedIn = 0;
      const { outcomes, faultError } = await runLoad({
        gatewayUrl: base,
        key: t.key,
        perSecond: PER_SECOND,
        durationMs: FAULT_AT_MS + 100,
        faultAtMs: FAULT_AT_MS,
        fault: async () => {
          faultAt = Date.now();
          const exited = once(first.child, "exit");
          first.child.kill("SIGINT");
          await exited;
          exitedIn = Date.now() - faultAt;
        },
      });
      if (faultError) throw faultError;
      proc = await start();
      const acc = await settledAccount(base, t.mgmtKey, t.hash, servedIds(outcomes), { timeoutMs: SETTLE_MS });
      const row = rowOf("SIGINT npm start, streams in flight", outcomes, faultAt, acc);
      row.failures = [`exited in ${(exitedIn / 1000).toFixed(1)} s`, row.failures].filter(Boolean).join("; ");
      table.push(row);
      expectNothingLost(outcomes, acc);
    }, 480_000);
  });
});

/** A provider key and a BYOK key with a hard lifetime ceiling, in the organisation of `managementKey`. */
async function keyOf(gatewayUrl: string, managementKey: string, name: string) {
  const mgmt = gatewayClient(gatewayUrl, managementKey);
  const provider = await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-fault-0001" });
  if (provider.status !== 201) throw new Error(`provider key: ${provider.status} ${provider.text}`);
  const created = await mgmt.post("/v1/keys", { name: name.replace(/[^A-Za-z0-9 -]/g, ""), include_byok_in_limit: true, limit: 100, limit_reset: "lifetime" });
  if (created.status !== 201) throw new Error(`key: ${created.status} ${created.text}`);
  return { mgmtKey: managementKey, key: created.json.data.key as string, hash: created.json.data.hash as string };
}
