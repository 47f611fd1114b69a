import { ledger } from "@router/proto";
import { waitFor } from "@router/testkit";
import { keyCeiling, orgId, requestId, startTestLedger, USD, workspaceId, type Caller, type TestLedger } from "./ledger-fixture";

const { LIMIT_MODE_SOFT } = ledger.LimitMode;
const { WINDOW_DAILY } = ledger.Window;

let l: TestLedger;
// Admit waits at most this long for leases (the product's default). A trim 200 ms into the wait must
// be seen in time on a busy machine too: with 600 ms the trimmed case failed under a full test run.
const LEASE_WAIT_MS = 1_500;
beforeAll(async () => {
  // Shares of a quarter of the headroom (the default).
  l = await startTestLedger({ label: "budget_leases", leaseWaitMs: LEASE_WAIT_MS });
});
afterAll(() => l.close());
beforeEach(() => l.clock.set(new Date("2026-11-18T10:00:00.000Z")));

async function expectOk(res: Promise<{ status: number; json: Record<string, unknown> }>): Promise<void> {
  const { status, json } = await res;
  if (status !== 200 && status !== 201) throw new Error(`write answered ${status}: ${JSON.stringify(json)}`);
}
const workspaceBudget = (org: string, ws: string, body: Record<string, unknown>) =>
  expectOk(l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws }, body));
const agentBudget = (org: string, agent: string, body: Record<string, unknown>) =>
  expectOk(l.http("PUT", `/v1/agents/${agent}/budgets/daily`, { orgId: org }, body));

/** The counter row of a workspace's or an agent's daily budget, as a ceiling for `used`. */
const budgetRow = (subjectKind: string, subjectId: string) => keyCeiling({ subjectKind, subjectId, window: WINDOW_DAILY });

const lease = (org: string, extra: Partial<ledger.LeaseRequest> = {}) =>
  l.lease({ leaseId: `lease_${requestId()}`, orgId: org, ceilings: [], isByok: true, wantNanodollars: USD, minNanodollars: 1n, ...extra });

const admit = (org: string, extra: Partial<ledger.AdmitRequest> = {}) =>
  l.admit({ requestId: requestId(), orgId: org, ceilings: [], worstCaseNanodollars: USD / 10n, isByok: true, ...extra });

/** Settled + reserved on a budget's row, leases whole (what Admit measures). */
async function reservedOn(subjectKind: string, subjectId: string): Promise<bigint> {
  const r = await l.db.query<{ total: string }>(
    `SELECT (settled_nanodollars + reserved_nanodollars)::text AS total FROM spend_counters
     WHERE subject_kind = $1 AND subject_id = $2 AND window_kind = 'daily'`,
    [subjectKind, subjectId],
  );
  return BigInt(r.rows[0]?.total ?? "0");
}

describe("leases on budgets", () => {
  it("reserves on the key's ceiling, the workspace's and the agent's budgets, sized by the least headroom", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 8 });
    await agentBudget(org, "bot", { limit_usd: 2 });
    const key = keyCeiling({ limitNanodollars: 100n * USD });

    const granted = await lease(org, { workspaceId: ws, agent: "bot", ceilings: [key], wantNanodollars: 10n * USD });

    // A quarter of the agent's $2 of headroom, the least of the three.
    expect(granted).toMatchObject({ granted: true, amountNanodollars: USD / 2n });
    expect(await reservedOn("workspace", ws)).toBe(USD / 2n);
    expect(await reservedOn("agent", `${org}/bot`)).toBe(USD / 2n);
    // Usage leaves the lease's unspent share out.
    expect(await l.used(budgetRow("workspace", ws))).toBe(0n);
  });

  it("leases on budgets alone for a key without a ceiling, and grants nothing when no budget counts", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });

    expect(await lease(org, { workspaceId: ws })).toMatchObject({ granted: true, amountNanodollars: USD });
    expect(await lease(org, { workspaceId: workspaceId() })).toEqual(expect.objectContaining({ granted: false }));
  });

  it("sizes a soft budget as if hard and grants nothing once its headroom is below the minimum, so Admit warns", async () => {
    const org = orgId();
    await agentBudget(org, "soft-bot", { limit_usd: 1, mode: "soft" });

    expect(await lease(org, { agent: "soft-bot" })).toMatchObject({ granted: true, amountNanodollars: USD / 4n });
    // $0.75 left: a quarter is under the $0.5 minimum.
    expect((await lease(org, { agent: "soft-bot", minNanodollars: USD / 2n })).granted).toBe(false);
  });

  it("still refuses a soft key ceiling, naming its mode", async () => {
    const org = orgId();
    await agentBudget(org, "bot", { limit_usd: 1 });
    await expect(lease(org, { agent: "bot", ceilings: [keyCeiling({ mode: LIMIT_MODE_SOFT })] })).rejects.toMatchObject({
      details: { field: "ceilings[0].mode" },
    });
  });
});

describe("Admit beside leases on a shared budget", () => {
  it("waits for a lease's unspent share instead of refusing, and admits once the lease is trimmed", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });
    // Another gateway's lease: $1, nothing spent from it yet.
    const held = await lease(org, { workspaceId: ws });
    expect(held.amountNanodollars).toBe(USD);
    // Another key takes the rest through Admit.
    expect((await admit(org, { workspaceId: ws, worstCaseNanodollars: 3n * USD })).admitted).toBe(true);

    setTimeout(() => void l.trim(held.holdId), 200);
    const started = performance.now();
    const res = await admit(org, { workspaceId: ws });

    expect(res.admitted).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it("recalls the leases it waits for: their gateway's next CloseHolds answers them, and the trim lets Admit through", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });
    const held = await lease(org, { workspaceId: ws });
    const ws2 = workspaceId();
    await workspaceBudget(org, ws2, { limit_usd: 4 });
    const other = await lease(org, { workspaceId: ws2 });
    expect((await admit(org, { workspaceId: ws, worstCaseNanodollars: 3n * USD })).admitted).toBe(true);
    expect((await l.closeHolds({ renewHoldIds: [held.holdId] })).recalledLeaseHoldIds).toEqual([]);

    const waiting = admit(org, { workspaceId: ws });
    const recalled = await waitFor(
      async () => {
        const res = await l.closeHolds({ leaseCovers: [{ holdId: held.holdId }, { holdId: other.holdId }] });
        return res.recalledLeaseHoldIds.length > 0 && res.recalledLeaseHoldIds;
      },
      { timeoutMs: 500, intervalMs: 20, what: "the lease to be recalled" },
    );
    expect(recalled).toEqual([held.holdId]);
    await l.trim(held.holdId);

    expect((await waiting).admitted).toBe(true);
  });

  it("counts what a lease's gateway reports running: a lease whose requests cover it refuses at once", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });
    const held = await lease(org, { workspaceId: ws });
    await l.closeHolds({ leaseCovers: [{ holdId: held.holdId, inFlightNanodollars: USD, spentNanodollars: 0n }] });
    expect((await admit(org, { workspaceId: ws, worstCaseNanodollars: 3n * USD })).admitted).toBe(true);

    const started = performance.now();
    const res = await admit(org, { workspaceId: ws });

    expect(res.refusal?.scope).toBe("workspace");
    expect(performance.now() - started).toBeLessThan(150);
  });

  it("refuses after the wait when the lease is never trimmed (its gateway is gone)", async () => {
    const org = orgId();
    await agentBudget(org, "bot", { limit_usd: 4 });
    await lease(org, { agent: "bot" });
    expect((await admit(org, { agent: "bot", worstCaseNanodollars: 3n * USD })).admitted).toBe(true);

    const started = performance.now();
    const res = await admit(org, { agent: "bot" });

    expect(res.refusal?.scope).toBe("agent");
    // It waited out (nearly) the whole wait: the last poll is skipped when it would end past it.
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_WAIT_MS - 150);
  });
});

describe("a turn admitted from a lease", () => {
  function tenant() {
    const org = orgId();
    return { org, agent: { orgId: org, credential: "inference" } as Caller };
  }
  async function openRun(agent: Caller): Promise<string> {
    const res = await l.http("POST", "/v1/runs", agent, { budget_usd: 1 });
    expect(res.status).toBe(201);
    return res.json.data.id as string;
  }

  /** A tenant whose workspace has a $4 budget, a $1 run with these limits, and a lease on the workspace. */
  async function leasedRun(limits: Record<string, unknown>) {
    const { org, agent } = tenant();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });
    const res = await l.http("POST", "/v1/runs", agent, { budget_usd: 1, ...limits });
    const held = await lease(org, { workspaceId: ws });
    return { org, agent, ws, runId: res.json.data.id as string, held };
  }

  it("is reserved on the run alone when the lease covers the key and the budgets", async () => {
    const { org, agent } = tenant();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });
    const runId = await openRun(agent);
    const held = await lease(org, { workspaceId: ws });
    const before = await reservedOn("workspace", ws);

    const res = await admit(org, { workspaceId: ws, runId, leaseHoldId: held.holdId });

    expect(res).toMatchObject({ admitted: true, holdId: "" });
    expect(await reservedOn("workspace", ws)).toBe(before);
    const run = (await l.http("GET", `/v1/runs/${runId}`, agent)).json.data as Record<string, unknown>;
    expect(run).toMatchObject({ reserved: 0.1, turns_used: 1 });
  });

  it("never passes the run's turn limit while leased turns race, and counts a request sent twice at once as one turn", async () => {
    const { org, agent, ws, runId, held } = await leasedRun({ max_turns: 5 });
    const twice = requestId();

    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => admit(org, { workspaceId: ws, runId, leaseHoldId: held.holdId, worstCaseNanodollars: USD / 100n })),
      admit(org, { requestId: twice, workspaceId: ws, runId, leaseHoldId: held.holdId, worstCaseNanodollars: USD / 100n }),
      admit(org, { requestId: twice, workspaceId: ws, runId, leaseHoldId: held.holdId, worstCaseNanodollars: USD / 100n }),
    ]);

    const run = (await l.http("GET", `/v1/runs/${runId}`, agent)).json.data as Record<string, unknown>;
    expect(run).toMatchObject({ turns_used: 5, reserved: 0.05 });
    // The two answers for one request agree; every other admitted answer is a turn of its own.
    const [a, b] = answers.slice(12);
    expect(a?.admitted).toBe(b?.admitted);
    expect(answers.slice(0, 12).filter((x) => x.admitted).length + (a?.admitted ? 1 : 0)).toBe(5);
    expect(answers.filter((x) => !x.admitted).every((x) => x.refusal?.scope === "run")).toBe(true);
  });

  it("takes the first turn of a lease this ledger granted in one statement, reading neither the run nor the lease first", async () => {
    const { org, ws, runId, held } = await leasedRun({});
    const sent: string[] = [];
    const query = l.db.query;
    l.db.query = ((sql: string, params?: unknown[], opts?: Parameters<typeof query>[2]) => {
      sent.push(sql);
      return query.call(l.db, sql, params, opts);
    }) as typeof query;
    try {
      expect(await admit(org, { workspaceId: ws, runId, leaseHoldId: held.holdId })).toMatchObject({ admitted: true, holdId: "" });
    } finally {
      l.db.query = query;
    }

    // The turn's one conditional statement (takeOpenTurn); no read of the run and the lease before it.
    expect(sent.filter((sql) => sql.includes("INSERT INTO run_turns"))).toHaveLength(1);
    expect(sent.filter((sql) => sql.includes("AS lease_lines"))).toEqual([]);
  });

  it("decides a lease's later turns as the first: admitted while the run is open, refused once it is closed or the lease is gone", async () => {
    const { org, agent, ws, runId, held } = await leasedRun({ max_turns: 3 });
    const turn = () => admit(org, { workspaceId: ws, runId, leaseHoldId: held.holdId, worstCaseNanodollars: USD / 100n });

    // Each turn is one statement (this ledger granted the lease, so it knows what the lease covers).
    for (let i = 0; i < 3; i++) expect(await turn()).toMatchObject({ admitted: true, holdId: "" });
    expect(await turn()).toMatchObject({ admitted: false, refusal: { scope: "run", httpStatus: 403, message: "This run has used all 3 of its turns." } });
    const run = (await l.http("GET", `/v1/runs/${runId}`, agent)).json.data as Record<string, unknown>;
    expect(run).toMatchObject({ turns_used: 3, reserved: 0.03 });

    const open = (await l.http("POST", "/v1/runs", agent, { budget_usd: 1 })).json.data.id as string;
    const again = requestId();
    const onOpen = (id: string) => admit(org, { requestId: id, workspaceId: ws, runId: open, leaseHoldId: held.holdId, worstCaseNanodollars: USD / 100n });
    expect(await onOpen(again)).toMatchObject({ admitted: true });
    // The same request again is the same turn, not a second one.
    expect(await onOpen(again)).toMatchObject({ admitted: true });
    expect((await l.http("GET", `/v1/runs/${open}`, agent)).json.data).toMatchObject({ turns_used: 1 });

    expect((await l.http("POST", `/v1/runs/${open}/close`, agent, { status: "cancelled" })).status).toBe(200);
    expect(await onOpen(requestId())).toMatchObject({ admitted: false, refusal: { scope: "run", httpStatus: 409, runStatus: "cancelled" } });

    const fresh = (await l.http("POST", "/v1/runs", agent, { budget_usd: 1 })).json.data.id as string;
    await l.trim(held.holdId);
    await expect(admit(org, { workspaceId: ws, runId: fresh, leaseHoldId: held.holdId })).rejects.toMatchObject({ details: { field: "lease_hold_id" } });
    expect((await l.http("GET", `/v1/runs/${fresh}`, agent)).json.data).toMatchObject({ turns_used: 0, reserved: 0 });
  });

  it("is a 400 naming lease_hold_id when the lease is unknown, another organisation's, or misses a budget", async () => {
    const { org, agent } = tenant();
    const ws = workspaceId();
    await workspaceBudget(org, ws, { limit_usd: 4 });
    await agentBudget(org, "bot", { limit_usd: 4 });
    const runId = await openRun(agent);
    const workspaceOnly = await lease(org, { workspaceId: ws });
    const other = tenant();
    await workspaceBudget(other.org, ws, { limit_usd: 4 });
    const othersLease = await lease(other.org, { workspaceId: ws });

    for (const leaseHoldId of ["hold_nope", othersLease.holdId]) {
      await expect(admit(org, { workspaceId: ws, runId, leaseHoldId })).rejects.toMatchObject({ details: { field: "lease_hold_id" } });
    }
    await expect(admit(org, { workspaceId: ws, agent: "bot", runId, leaseHoldId: workspaceOnly.holdId })).rejects.toMatchObject({
      details: { field: "lease_hold_id" },
      message: "lease_hold_id: the lease does not cover the turn's agent limit",
    });
    await expect(admit(org, { workspaceId: ws, leaseHoldId: workspaceOnly.holdId })).rejects.toMatchObject({
      details: { field: "lease_hold_id" },
    });
  });
});
