import { keyCeiling, orgId, requestId, startTestLedger, USD, workspaceId, type TestLedger } from "./ledger-fixture";

let a: TestLedger;
let b: TestLedger;
beforeAll(async () => {
  a = await startTestLedger({ label: "budget_concurrency" });
  b = await startTestLedger({ replicaOf: a });
  b.clock.set(a.clock.now());
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const RACERS = 120;
const W = USD / 100n;

describe("budgets under concurrency", () => {
  it("keeps a workspace budget within one worst case when 120 requests of two keys race on two replicas", async () => {
    const org = orgId();
    const ws = workspaceId();
    const limit = 7n * W + W / 3n;
    const wsBudget = await a.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws }, { limit_usd: Number(limit) / 1e9 });
    expect(wsBudget.status).toBe(200);
    const keyA = keyCeiling({ limitNanodollars: 100n * USD });
    const keyB = keyCeiling({ limitNanodollars: 100n * USD });

    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) => {
        const ledger = i % 2 === 0 ? a : b;
        return ledger
          .admit({
            requestId: requestId(),
            orgId: org,
            workspaceId: ws,
            agent: "racer",
            ceilings: [i % 4 < 2 ? keyA : keyB],
            worstCaseNanodollars: W,
            isByok: true,
          })
          .then(async (res) => {
            // Each served request costs its whole worst case, settled on the replica that admitted it.
            if (res.admitted) await ledger.settle({ holdId: res.holdId, listCostNanodollars: W });
            return res;
          });
      }),
    );

    const admitted = answers.filter((r) => r.admitted).length;
    const refused = answers.filter((r) => !r.admitted);
    const settled = await a.used(keyCeiling({ subjectKind: "workspace", subjectId: ws, limitNanodollars: limit }));
    expect(admitted).toBe(8);
    expect(settled).toBe(BigInt(admitted) * W);
    expect(settled).toBeLessThanOrEqual(limit + W);
    expect(refused.every((r) => r.refusal?.scope === "workspace")).toBe(true);
    // Both keys' rows saw only what the workspace let through.
    expect((await a.used(keyA)) + (await a.used(keyB))).toBe(settled);
  });

  it("keeps an agent budget exact while the agent's requests race across workspaces and replicas", async () => {
    const org = orgId();
    const put = await a.http("PUT", "/v1/agents/swarm/budgets/monthly", { orgId: org }, { limit_usd: 0.05 });
    expect(put.status).toBe(200);

    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        (i % 2 === 0 ? a : b).admit({
          requestId: requestId(),
          orgId: org,
          workspaceId: i % 3 === 0 ? workspaceId() : "",
          agent: "swarm",
          worstCaseNanodollars: W,
          isByok: true,
        }),
      ),
    );

    expect(answers.filter((r) => r.admitted)).toHaveLength(5);
    expect(answers.filter((r) => !r.admitted).every((r) => r.refusal?.scope === "agent")).toBe(true);
  });
});
