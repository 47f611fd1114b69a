import { randomBytes } from "node:crypto";
import { createPostgresDb } from "@router/db";
import { callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { signIdentity } from "@router/http-kit";
import { startLedger } from "@router/ledger";
import { createLogger } from "@router/logging";
import { systemClock } from "@router/money";
import { ledger } from "@router/proto";
import { createTestDatabase, metricSample, newIdentityKeys } from "@router/testkit";
import { timedDb } from "./timed-db";

/**
 * Admit + settlement of one request at a time (the settlement a CloseHolds call with one item, the
 * ledger's closing path, which a served request's record on the bus also takes), as the ledger itself times them, for three kinds of
 * request: one that nothing counts (a key without a ceiling, a workspace and an agent without
 * budgets: the budgets are read from memory and nothing is written), one that only its key's
 * ceiling counts, and one that its key's ceiling, its workspace's budget and its agent's budgets
 * (organisation-wide and workspace-scoped) all count: four counter rows; and a turn of a run with
 * the same four rows, admitted from a spend lease on them as the gateway does, so Admit reserves
 * on the run alone (`lease_hold_id`) and its settlement settles the turn. The ledger runs in this
 * process on a fresh database (real Postgres, real gRPC on loopback). Prints the round trips, the
 * in-service time from the ledger's own histograms (bucket bounds), and Postgres time per call.
 * Not a test: it asserts nothing.
 *
 *   npx tsc -b services/ledger/bench && node services/ledger/bench/dist/admit-settle.js
 *
 * BENCH_REQUESTS (1000 per kind, after 200 to warm up), BENCH_CONCURRENCY (1: one request at a
 * time), BENCH_CLOSING_INTERVAL_MS (the ledger's default, 20 ms: a settlement waits for its batch; 0
 * starts a batch as soon as the previous one committed).
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? "1000");
const WARMUP = 200;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? "1");
const CLOSING_INTERVAL_MS = process.env.BENCH_CLOSING_INTERVAL_MS ? Number(process.env.BENCH_CLOSING_INTERVAL_MS) : undefined;
const IDENTITY = newIdentityKeys();
const USD = 1_000_000_000n;
const WORST_CASE = USD / 1000n;
const LIST_COST = 12_345n;
const ORG = "org_bench";
const WORKSPACE = "ws_bench";
/** A workspace of the same organisation without budgets. */
const UNBUDGETED_WORKSPACE = "ws_free";

interface Kind {
  label: string;
  ceilings: ledger.Ceiling[];
  workspaceId: string;
  agent: string;
  /** A turn of a run admitted from a spend lease on its rows. */
  turn?: boolean;
}

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

function summary(label: string, values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(3).padStart(8);
  return `${label.padEnd(26)} n=${String(s.length).padStart(5)}  p50 ${f(percentile(s, 50))}  p90 ${f(percentile(s, 90))}  p99 ${f(percentile(s, 99))} ms`;
}

/** "p50 <= 0.5 ms, p90 <= 1 ms" from cumulative histogram buckets (differences of two scrapes). */
function fromBuckets(buckets: Array<[string, number]>): string {
  const total = buckets.find(([le]) => le === "+Inf")?.[1] ?? 0;
  if (total === 0) return "not measured";
  const bound = (p: number) => {
    const le = buckets.find(([, n]) => n >= (p / 100) * total)?.[0];
    return le === undefined || le === "+Inf" ? "+Inf" : String(Number(le) * 1000);
  };
  return `n=${total}  p50 <= ${bound(50)} ms, p90 <= ${bound(90)} ms, p99 <= ${bound(99)} ms`;
}

const keyCeiling = (): ledger.Ceiling => ({
  subjectKind: "key",
  subjectId: `key_${randomBytes(6).toString("hex")}`,
  // Never reached: every Admit takes the whole path (lock, compare, reserve).
  limitNanodollars: 1_000_000n * USD,
  window: ledger.Window.WINDOW_MONTHLY,
  mode: ledger.LimitMode.LIMIT_MODE_HARD,
  includeByok: true,
  subjectName: "bench",
});

async function main(): Promise<void> {
  const database = await createTestDatabase("ledgerbench");
  const db = createPostgresDb({ url: database.url, schema: "ledger", max: 10, applicationName: "router-ledger" });
  const timed = timedDb(db);
  const app = await startLedger({
    db: timed.db,
    log: createLogger({ level: "warn" }),
    clock: systemClock,
    grpcPort: 0,
    metricsPort: 0,
    httpPort: 0,
    identityKeys: IDENTITY.publicKeys,
    closingIntervalMs: CLOSING_INTERVAL_MS,
  });
  const client = new ledger.LedgerServiceClient(`127.0.0.1:${app.grpcPort}`, insecure(), CLIENT_OPTIONS);
  const call = { deadlineMs: 10_000, service: "ledger" };
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    // Budgets go in as an operator sets them: through the management routes, as the gateway forwards.
    const put = async (path: string, body: unknown, workspace?: string, method = "PUT", credential: "management" | "inference" = "management") => {
      const identity = await signIdentity(
        {
          orgId: ORG,
          credential,
          keyHash: null,
          keyName: null,
          workspaceId: null,
          role: "owner",
          userId: null,
          operator: false,
          ...(workspace ? { workspace: { id: workspace, name: "Bench" } } : {}),
        },
        IDENTITY.signingKey,
      );
      const res = await fetch(`http://127.0.0.1:${app.httpPort}${path}`, {
        method,
        headers: { "x-router-identity": identity, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { data: { id?: string } };
    };
    await put(`/v1/workspaces/${WORKSPACE}/budgets/monthly`, { limit_usd: 1_000_000 }, WORKSPACE);
    await put("/v1/agents/budgeted/budgets/monthly", { limit_usd: 1_000_000 });
    await put("/v1/agents/budgeted/budgets/daily", { limit_usd: 100_000, workspace_id: WORKSPACE }, WORKSPACE);

    const kinds: Kind[] = [
      { label: "nothing counts", ceilings: [], workspaceId: UNBUDGETED_WORKSPACE, agent: "unbudgeted" },
      { label: "key ceiling only", ceilings: [keyCeiling()], workspaceId: UNBUDGETED_WORKSPACE, agent: "" },
      { label: "key + workspace + 2 agent", ceilings: [keyCeiling()], workspaceId: WORKSPACE, agent: "budgeted" },
      { label: "turn, from a lease on those", ceilings: [keyCeiling()], workspaceId: WORKSPACE, agent: "budgeted", turn: true },
    ];
    const scrape = async (name: string) => {
      const text = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
      const bounds = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"`, "gm"))].map((m) => m[1] ?? "");
      return new Map(bounds.map((le) => [le, metricSample(text, `${name}_bucket`, { le })]));
    };
    const diff = (after: Map<string, number>, before: Map<string, number>): Array<[string, number]> =>
      [...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)]);

    out(
      `ledger Admit + Settle, ${REQUESTS} requests per kind, ${CONCURRENCY} at a time, closing interval ` +
        `${CLOSING_INTERVAL_MS ?? 20} ms, ledger in this process on Postgres, gRPC on loopback`,
    );
    for (const kind of kinds) {
      // A turn's run and the lease that admits it on the key and the budgets, as a gateway holds one.
      const runId = kind.turn ? ((await put("/v1/runs", { budget_usd: 1_000_000 }, undefined, "POST", "inference")).data.id ?? "") : "";
      const lease = kind.turn
        ? await callUnary(
            client,
            client.lease,
            ledger.LeaseRequest.fromPartial({
              leaseId: `lease_${randomBytes(12).toString("hex")}`,
              orgId: ORG,
              ceilings: kind.ceilings,
              workspaceId: kind.workspaceId,
              agent: kind.agent,
              isByok: true,
              wantNanodollars: 1_000n * USD,
              minNanodollars: WORST_CASE,
            }),
            call,
          )
        : undefined;
      if (lease && !lease.granted) throw new Error("no lease granted for the turns");
      const one = async (admitMs: number[], settleMs: number[]) => {
        const requestId = `gen-${randomBytes(12).toString("hex")}`;
        const req = ledger.AdmitRequest.fromPartial({
          requestId,
          orgId: ORG,
          workspaceId: kind.workspaceId,
          agent: kind.agent,
          ceilings: kind.ceilings,
          worstCaseNanodollars: WORST_CASE,
          isByok: true,
          runId,
          leaseHoldId: lease?.holdId ?? "",
        });
        const a = process.hrtime.bigint();
        const admitted = await callUnary(client, client.admit, req, call);
        admitMs.push(elapsedMs(a));
        if (!admitted.admitted) throw new Error(`refused: ${admitted.refusal?.message}`);
        const s = process.hrtime.bigint();
        const settlement = ledger.SettleRequest.fromPartial({
          holdId: admitted.holdId,
          listCostNanodollars: LIST_COST,
          orgId: ORG,
          requestId,
          workspaceId: kind.workspaceId,
          agent: kind.agent,
          isByok: true,
          ...(kind.turn ? { runTurn: { runId, model: "openai/gpt-4o-mini", finishReason: "stop" } } : {}),
        });
        await callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial({ settlements: [settlement] }), call);
        settleMs.push(elapsedMs(s));
      };
      const run = async (n: number) => {
        const admitMs: number[] = [];
        const settleMs: number[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next++ < n) await one(admitMs, settleMs);
          }),
        );
        return { admitMs, settleMs };
      };
      await run(WARMUP);
      timed.samples.clear();
      const admitBefore = await scrape("ledger_admit_duration_seconds");
      const closingBefore = await scrape("ledger_closing_duration_seconds");
      const { admitMs, settleMs } = await run(REQUESTS);
      const admitInside = diff(await scrape("ledger_admit_duration_seconds"), admitBefore);
      const closingInside = diff(await scrape("ledger_closing_duration_seconds"), closingBefore);

      out(`\n${kind.label}:`);
      out(`  round trip  ${summary("Admit", admitMs)}`);
      out(`  round trip  ${summary("Settle", settleMs)}`);
      out(`  in service  Admit   ${fromBuckets(admitInside)}`);
      out(`  in service  Settle  ${fromBuckets(closingInside)}`);
      for (const [label, ms] of timed.samples) out(`  Postgres    ${summary(label, ms)}`);
    }
  } finally {
    client.close();
    await app.close();
    await db.close();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
