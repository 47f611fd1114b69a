import { ManualClock } from "@router/money";
import { createLogger } from "@router/logging";
import { ledger, type routing } from "@router/proto";
import type { CallerKey } from "../../src/auth/caller";
import { BUDGET_SUBJECTS_TTL_MS, BudgetSubjects } from "../../src/spend/budget-subjects";
import type { Asked, LedgerPort } from "../../src/spend/ledger-port";
import { SpendAdmission } from "../../src/spend/spend-admission";
import type { SpendLeases } from "../../src/spend/spend-leases";
import { callerKey } from "./caller-key";

const silent = createLogger({ level: "silent" });

const key = callerKey;

/** A ledger that counts what it is asked and answers from a table of budget subjects. */
function fakeLedger(subjects: { workspaceIds: string[]; agents: string[] } | "down") {
  const asked = { admit: 0, budgetSubjects: 0 };
  const port: LedgerPort = {
    admit: async () => {
      asked.admit++;
      return { admitted: true, holdId: "hold_1", limitWarning: "" } as ledger.AdmitResponse;
    },
    closeHolds: async () => ({}) as ledger.CloseHoldsResponse,
    lease: async () => ({}) as ledger.LeaseResponse,
    budgetSubjects: async () => {
      asked.budgetSubjects++;
      if (subjects === "down") throw new Error("ledger down");
      return subjects;
    },
    creditTerms: async () => ({ feeBps: 0, purchasedNanodollars: 0n }),
  };
  return { port, asked };
}

const request = (k: CallerKey, agent: string | null = null, runId: string | null = null, guardrailBudgets: routing.GuardrailBudget[] = []) => ({
  requestId: "gen-1",
  orgId: "org_1",
  key: k,
  agent,
  worstCase: 100n,
  checkOnly: false,
  runId,
  guardrailBudgets,
});

describe("spend admission without a limit that counts", () => {
  it("admits a request no ceiling and no budget counts without asking Admit, and asks the ledger which budgets exist once a while", async () => {
    const clock = new ManualClock();
    const { port, asked } = fakeLedger({ workspaceIds: ["ws_b"], agents: ["planner"] });
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, clock, silent));
    for (let i = 0; i < 5; i++) {
      expect(await spend.admit(request(key()))).toEqual({ admitted: true, holdId: "", lease: null, warning: "" });
    }
    expect(asked).toEqual({ admit: 0, budgetSubjects: 1 });
    clock.advance(BUDGET_SUBJECTS_TTL_MS);
    await spend.admit(request(key()));
    expect(asked.budgetSubjects).toBe(2);
  });

  it.each([
    ["a workspace with a budget", key({ workspaceId: "ws_b" }), null],
    ["an agent with a budget", key(), "planner"],
    ["a key ceiling that counts BYOK", key({ limitNanos: 1_000n, limitReset: "daily", includeByokInLimit: true }), null],
  ])("asks Admit for %s", async (_what, k, agent) => {
    const { port, asked } = fakeLedger({ workspaceIds: ["ws_b"], agents: ["planner"] });
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, new ManualClock(), silent));
    expect(await spend.admit(request(k, agent))).toMatchObject({ admitted: true, holdId: "hold_1" });
    expect(asked.admit).toBe(1);
  });

  it("asks Admit for a turn of a run that nothing else counts, naming the run", async () => {
    const { port, asked } = fakeLedger({ workspaceIds: [], agents: [] });
    const admits: Asked<ledger.AdmitRequest>[] = [];
    const admit = port.admit;
    port.admit = (req) => {
      admits.push(req);
      return admit(req);
    };
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, new ManualClock(), silent));
    expect(await spend.admit(request(key(), null, "run_abc"))).toMatchObject({ admitted: true, holdId: "hold_1" });
    expect(asked.admit).toBe(1);
    expect(admits[0]).toMatchObject({ runId: "run_abc", dryRun: false });
  });

  /** A lease book that admits everything from `lease_1` and records what comes back. */
  function fakeLeases() {
    const seen = { asked: [] as Array<{ workspaceId: string; agent: string; ceilings: number }>, finished: [] as unknown[] };
    const leases = {
      admit: async (scope: { workspaceId: string; agent: string; ceilings: unknown[] }) => {
        seen.asked.push({ workspaceId: scope.workspaceId, agent: scope.agent, ceilings: scope.ceilings.length });
        return { lease: { holdId: "lease_1" }, worstCase: 100n };
      },
      finish: (_ticket: unknown, cost: unknown) => seen.finished.push(cost),
    } as unknown as SpendLeases;
    return { leases, seen };
  }

  it("admits from a spend lease where only a budget counts, and asks none where nothing does", async () => {
    const { port, asked } = fakeLedger({ workspaceIds: ["ws_b"], agents: [] });
    const { leases, seen } = fakeLeases();
    const spend = new SpendAdmission(port, leases, new BudgetSubjects(port, new ManualClock(), silent));

    expect(await spend.admit(request(key({ workspaceId: "ws_b" })))).toMatchObject({ admitted: true, holdId: "", lease: { lease: { holdId: "lease_1" } } });
    expect(await spend.admit(request(key()))).toMatchObject({ admitted: true, lease: null });
    expect(seen.asked).toEqual([{ workspaceId: "ws_b", agent: "", ceilings: 0 }]);
    expect(asked.admit).toBe(0);
  });

  it("admits a turn from a spend lease, then asks Admit for the run alone, naming the lease", async () => {
    const { port, asked } = fakeLedger({ workspaceIds: [], agents: [] });
    const admits: Asked<ledger.AdmitRequest>[] = [];
    const admit = port.admit;
    port.admit = (req) => {
      admits.push(req);
      return admit(req);
    };
    const { leases, seen } = fakeLeases();
    const spend = new SpendAdmission(port, leases, new BudgetSubjects(port, new ManualClock(), silent));
    const hard = key({ limitNanos: 1_000n, limitReset: "daily", includeByokInLimit: true });

    expect(await spend.admit(request(hard, null, "run_abc"))).toMatchObject({ admitted: true, holdId: "hold_1", lease: { lease: { holdId: "lease_1" } } });
    expect(asked.admit).toBe(1);
    expect(admits[0]).toMatchObject({ runId: "run_abc", leaseHoldId: "lease_1" });
    expect(seen.finished).toEqual([]);
  });

  it("gives a turn's worst case back to the lease when the run refuses it or Admit fails", async () => {
    const { port } = fakeLedger({ workspaceIds: [], agents: [] });
    const { leases, seen } = fakeLeases();
    const spend = new SpendAdmission(port, leases, new BudgetSubjects(port, new ManualClock(), silent));
    const hard = key({ limitNanos: 1_000n, limitReset: "daily", includeByokInLimit: true });
    port.admit = async () =>
      ({ admitted: false, holdId: "", limitWarning: "", refusal: { httpStatus: 409, code: "conflict", message: "run is paused", scope: "run", subjectId: "run_abc", runStatus: "paused" } }) as ledger.AdmitResponse;

    expect(await spend.admit(request(hard, null, "run_abc"))).toMatchObject({ admitted: false, scope: "run", runStatus: "paused" });
    port.admit = async () => {
      throw new Error("ledger down");
    };
    await expect(spend.admit(request(hard, null, "run_abc"))).rejects.toThrow("ledger down");
    expect(seen.finished).toEqual([null, null]);
  });

  it("asks Admit when the ledger cannot say which budgets exist", async () => {
    const { port, asked } = fakeLedger("down");
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, new ManualClock(), silent));
    expect(await spend.admit(request(key()))).toMatchObject({ admitted: true, holdId: "hold_1" });
    expect(asked.admit).toBe(1);
  });

  it("reads the subjects again at once after a budget write through this gateway", async () => {
    const clock = new ManualClock();
    const subjects = { workspaceIds: [] as string[], agents: [] as string[] };
    const { port, asked } = fakeLedger(subjects);
    const budgets = new BudgetSubjects(port, clock, silent);
    const spend = new SpendAdmission(port, undefined, budgets);
    await spend.admit(request(key()));
    subjects.workspaceIds.push("ws_a");
    budgets.invalidate("org_1");
    await spend.admit(request(key()));
    expect(asked).toEqual({ admit: 1, budgetSubjects: 2 });
  });
});

describe("spend admission with guardrail budgets", () => {
  const budget = (o: Partial<routing.GuardrailBudget> = {}): routing.GuardrailBudget => ({
    guardrailId: "gr_1",
    limitNanodollars: 5_000n,
    window: "monthly",
    includeByok: true,
    ...o,
  });
  const recording = () => {
    const { port, asked } = fakeLedger({ workspaceIds: [], agents: [] });
    const admits: Asked<ledger.AdmitRequest>[] = [];
    const admit = port.admit;
    port.admit = (req) => {
      admits.push(req);
      return admit(req);
    };
    return { port, asked, admits };
  };

  it("sends each guardrail budget that counts BYOK as a hard ceiling on a counter of that guardrail and this key, after the key's own", async () => {
    const { port, admits } = recording();
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, new ManualClock(), silent));
    const k = key({ hash: "keyhash", limitNanos: 1_000n, limitReset: "daily", includeByokInLimit: true });
    await spend.admit(request(k, null, null, [budget(), budget({ guardrailId: "gr_2", window: "lifetime", limitNanodollars: 9n })]));
    expect(admits[0]?.ceilings).toEqual([
      expect.objectContaining({ subjectKind: "key", subjectId: "keyhash" }),
      {
        subjectKind: "guardrail",
        subjectId: "gr_1/keyhash",
        limitNanodollars: 5_000n,
        window: ledger.Window.WINDOW_MONTHLY,
        mode: ledger.LimitMode.LIMIT_MODE_HARD,
        includeByok: true,
        subjectName: "",
      },
      expect.objectContaining({ subjectKind: "guardrail", subjectId: "gr_2/keyhash", limitNanodollars: 9n, window: ledger.Window.WINDOW_LIFETIME }),
    ]);
  });

  it("skips Admit for a guardrail budget that leaves BYOK out (every request is BYOK), and asks it for one that counts BYOK", async () => {
    const { port, asked } = recording();
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, new ManualClock(), silent));
    expect(await spend.admit(request(key(), null, null, [budget({ includeByok: false })]))).toMatchObject({ admitted: true, holdId: "" });
    expect(asked.admit).toBe(0);
    expect(await spend.admit(request(key(), null, null, [budget()]))).toMatchObject({ admitted: true, holdId: "hold_1" });
    expect(asked.admit).toBe(1);
  });

  it("reports the ledger's guardrail refusal with its scope", async () => {
    const { port } = recording();
    port.admit = async () =>
      ({
        admitted: false,
        holdId: "",
        limitWarning: "",
        refusal: { httpStatus: 403, code: "budget_exceeded", message: "This guardrail has reached its monthly spend limit of $0.000005.", scope: "guardrail", subjectId: "gr_1/h1", runStatus: "" },
      }) as ledger.AdmitResponse;
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, new ManualClock(), silent));
    expect(await spend.admit(request(key(), null, null, [budget()]))).toMatchObject({ admitted: false, code: "budget_exceeded", httpStatus: 403, scope: "guardrail" });
  });
});
