import { ManualClock } from "@router/money";
import { createLogger } from "@router/logging";
import { ledger, type routing } from "@router/proto";
import type { CallerKey } from "../../src/auth/caller";
import { BUDGET_SUBJECTS_TTL_MS, BudgetSubjects } from "../../src/spend/budget-subjects";
import type { LedgerPort } from "../../src/spend/ledger-port";
import { SpendAdmission } from "../../src/spend/spend-admission";
import type { SpendLeases } from "../../src/spend/spend-leases";

const silent = createLogger({ level: "silent" });

function key(o: Partial<CallerKey> = {}): CallerKey {
  return {
    hash: "h1",
    prefix: "rt-v1-ab",
    name: null,
    label: null,
    class: "inference",
    workspaceId: "ws_a",
    workspaceName: "A",
    limitNanos: null,
    limitReset: null,
    limitMode: "hard",
    includeByokInLimit: false,
    paused: false,
    pausedReason: null,
    expiresAt: null,
    ...o,
  };
}

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
    const admits: ledger.AdmitRequest[] = [];
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

  it("never admits a turn of a run from a spend lease: the run is the ledger's", async () => {
    const { port, asked } = fakeLedger({ workspaceIds: [], agents: [] });
    let leaseAsked = 0;
    const leases = {
      admit: async () => {
        leaseAsked++;
        return { holdId: "lease_1" };
      },
    } as unknown as SpendLeases;
    const spend = new SpendAdmission(port, leases, new BudgetSubjects(port, new ManualClock(), silent));
    const hard = key({ limitNanos: 1_000n, limitReset: "daily", includeByokInLimit: true });

    expect(await spend.admit(request(hard))).toMatchObject({ admitted: true, holdId: "", lease: { holdId: "lease_1" } });
    expect(await spend.admit(request(hard, null, "run_abc"))).toMatchObject({ admitted: true, holdId: "hold_1", lease: null });
    expect([leaseAsked, asked.admit]).toEqual([1, 1]);
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
    const admits: ledger.AdmitRequest[] = [];
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
