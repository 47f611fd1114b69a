import { callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { health, ledger } from "@router/proto";
import { waitFor } from "@router/testkit";
import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "concurrency" });
});
afterAll(() => l.close());

const RACERS = 50;
const W = USD / 100n;

describe("Admit under concurrency", () => {
  it.each([
    ["a limit of exactly three requests", 3n * W],
    ["a limit between three and four requests", 3n * W + W / 2n],
  ])(
    "crosses a hard ceiling by at most one request when 50 Admits race (%s)",
    async (_label, limit) => {
      const key = keyCeiling({ limitNanodollars: limit });

      const answers = await Promise.all(
        Array.from({ length: RACERS }, () =>
          l.admit({ requestId: requestId(), orgId: "org_a", ceilings: [key], worstCaseNanodollars: W, isByok: true }),
        ),
      );
      const admitted = answers.filter((a) => a.admitted);
      await Promise.all(admitted.map((a) => l.settle({ holdId: a.holdId, listCostNanodollars: W })));

      const maxAdmitted = (limit + W - 1n) / W;
      expect(admitted.length).toBeGreaterThan(0);
      expect(BigInt(admitted.length)).toBeLessThanOrEqual(maxAdmitted);
      expect(answers.filter((a) => !a.admitted).every((a) => a.refusal?.code === "budget_exceeded")).toBe(true);
      const settled = await l.used(key);
      expect(settled).toBe(BigInt(admitted.length) * W);
      expect(settled).toBeLessThanOrEqual(limit + W);
    },
  );

  it("keeps every ceiling of a request exact when racing requests name them in different orders", async () => {
    const key = keyCeiling({ limitNanodollars: 5n * W });
    const workspace = keyCeiling({ subjectKind: "workspace", subjectId: "ws_race", limitNanodollars: 8n * W });

    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        l.admit({
          requestId: requestId(),
          orgId: "org_a",
          ceilings: i % 2 === 0 ? [key, workspace] : [workspace, key],
          worstCaseNanodollars: W,
          isByok: true,
        }),
      ),
    );

    const admitted = answers.filter((a) => a.admitted).length;
    expect(admitted).toBe(5);
    expect(await l.used(key)).toBe(5n * W);
    expect(await l.used(workspace)).toBe(5n * W);
  });

  it("places one hold when the same request is admitted concurrently", async () => {
    const key = keyCeiling();
    const req = { requestId: requestId(), orgId: "org_a", ceilings: [key], worstCaseNanodollars: W, isByok: true };

    const answers = await Promise.all(Array.from({ length: 10 }, () => l.admit(req)));

    expect(new Set(answers.map((a) => a.holdId)).size).toBe(1);
    expect(await l.used(key)).toBe(W);
  });
});

describe("Admit on two replicas", () => {
  let replica: TestLedger;
  beforeAll(async () => {
    replica = await startTestLedger({ replicaOf: l });
  });
  afterAll(() => replica.close());

  it("places one hold when both replicas admit the same request at the same moment", async () => {
    const key = keyCeiling();
    await l.admit({ requestId: requestId(), orgId: "org_a", ceilings: [key], worstCaseNanodollars: W, isByok: true });
    const req = { requestId: requestId(), orgId: "org_a", ceilings: [key], worstCaseNanodollars: W, isByok: true };
    const waitingOnLocks = async () =>
      (
        await l.db.query<{ n: bigint }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
      ).rows[0]?.n;

    // Holding the counter row makes both replicas look for the request's hold, find none and wait
    // on the row; the one that goes second then meets the other's hold.
    const { racing } = await l.db.tx(async (q) => {
      await q.query("SELECT 1 FROM spend_counters WHERE subject_id = $1 FOR UPDATE", [key.subjectId]);
      const both = Promise.all([l.admit(req), replica.admit(req)]);
      await waitFor(async () => (await waitingOnLocks()) === 2n, { what: "both replicas to wait on the counter row" });
      return { racing: both };
    });
    const answers = await racing;

    expect(answers.map((a) => a.admitted)).toEqual([true, true]);
    expect(answers[1]?.holdId).toBe(answers[0]?.holdId);
    expect(await l.used(key)).toBe(2n * W);
  });

  it("crosses a hard ceiling by at most one request when both replicas admit 50 requests at once", async () => {
    const limit = 3n * W;
    const key = keyCeiling({ limitNanodollars: limit });

    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        (i % 2 === 0 ? l : replica).admit({
          requestId: requestId(),
          orgId: "org_a",
          ceilings: [key],
          worstCaseNanodollars: W,
          isByok: true,
        }),
      ),
    );

    expect(answers.filter((a) => a.admitted)).toHaveLength(3);
    expect(await l.used(key)).toBe(limit);
  });
});

describe("health", () => {
  it("answers SERVING for the server and for LedgerService", async () => {
    const client = new health.HealthClient(`127.0.0.1:${l.grpcPort}`, insecure(), CLIENT_OPTIONS);
    try {
      const call = { deadlineMs: 5000, service: "ledger" };
      const whole = await callUnary(client, client.check, { service: "" }, call);
      const service = ledger.LedgerServiceClient.serviceName;
      const ledgerService = await callUnary(client, client.check, { service }, call);
      expect(whole.status).toBe(health.HealthCheckResponse_ServingStatus.SERVING);
      expect(ledgerService.status).toBe(health.HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      client.close();
    }
  });
});
