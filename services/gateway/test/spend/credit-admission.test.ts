import { ManualClock } from "@router/money";
import { createLogger } from "@router/logging";
import type { ledger } from "@router/proto";
import { BudgetSubjects } from "../../src/spend/budget-subjects";
import { CreditStanding, PURCHASE_TTL_MS } from "../../src/spend/credit-standing";
import type { LedgerPort } from "../../src/spend/ledger-port";
import { SpendAdmission } from "../../src/spend/spend-admission";
import type { SpendLeases } from "../../src/spend/spend-leases";
import type { CallerKey } from "../../src/auth/caller";
import { callerKey } from "./caller-key";

const silent = createLogger({ level: "silent" });

const key = callerKey;

const request = (k: CallerKey, worstCase = 100n) => ({
  requestId: "gen-1",
  orgId: "org_1",
  key: k,
  agent: null,
  worstCase,
  checkOnly: false,
  runId: null,
  guardrailBudgets: [],
});

/** A ledger charging `feeBps` on requests, answering Admit with `admit`, counting what it is asked. */
function fakeLedger(feeBps: number, admit: Partial<ledger.AdmitResponse> = {}) {
  const asked = { admit: 0, budgetSubjects: 0, creditTerms: [] as string[] };
  const port: LedgerPort = {
    admit: async () => {
      asked.admit++;
      return { admitted: true, holdId: "", limitWarning: "", ...admit } as ledger.AdmitResponse;
    },
    closeHolds: async () => ({}) as ledger.CloseHoldsResponse,
    lease: async () => ({}) as ledger.LeaseResponse,
    budgetSubjects: async () => {
      asked.budgetSubjects++;
      return { workspaceIds: [], agents: [] };
    },
    creditTerms: async (req) => {
      asked.creditTerms.push(req.orgId);
      return { feeBps, purchasedNanodollars: 7n };
    },
  };
  return { port, asked };
}

/** A lease book that would admit everything: it must not be asked while a fee is charged. */
const leases = () => {
  const seen = { asked: 0 };
  const book = {
    admit: async () => {
      seen.asked++;
      return { lease: { holdId: "lease_1" }, worstCase: 100n };
    },
    finish: () => undefined,
  } as unknown as SpendLeases;
  return { book, seen };
};

describe("spend admission while a fee is charged from credits", () => {
  it("asks Admit for a request nothing else counts (the balance counts it), never a lease, and notes the purchase Admit answers", async () => {
    const clock = new ManualClock();
    const { port, asked } = fakeLedger(500, { purchasedNanodollars: 42n });
    const credits = new CreditStanding(port, clock, silent);
    const { book, seen } = leases();
    const spend = new SpendAdmission(port, book, new BudgetSubjects(port, clock, silent), credits);

    await spend.admit(request(key()));
    await spend.admit(request(key({ limitNanos: 1_000n, limitReset: "daily", includeByokInLimit: true })));

    expect(asked.admit).toBe(2);
    expect(seen.asked).toBe(0);
    // Whether budgets exist does not matter: Admit is asked anyway.
    expect(asked.budgetSubjects).toBe(0);
    expect(await credits.purchased("org_1")).toBe(42n);
    expect(asked.creditTerms).toEqual([""]);
  });

  it("passes the ledger's 402 on", async () => {
    const refusal = { httpStatus: 402, code: "insufficient_credits", message: "buy credits", scope: "credits", subjectId: "org_1", runStatus: "" };
    const { port } = fakeLedger(500, { admitted: false, refusal });
    const spend = new SpendAdmission(port, undefined, undefined, new CreditStanding(port, new ManualClock(), silent));

    expect(await spend.admit(request(key(), 0n))).toEqual({ admitted: false, code: "insufficient_credits", message: "buy credits", httpStatus: 402, scope: "credits", runStatus: "" });
  });
});

describe("spend admission with no fee (the default)", () => {
  it("skips Admit as before, asking the ledger for the fee once and not per request", async () => {
    const clock = new ManualClock();
    const { port, asked } = fakeLedger(0);
    const spend = new SpendAdmission(port, undefined, new BudgetSubjects(port, clock, silent), new CreditStanding(port, clock, silent));

    for (let i = 0; i < 5; i++) expect(await spend.admit(request(key()))).toEqual({ admitted: true, holdId: "", lease: null, warning: "" });

    expect(asked.admit).toBe(0);
    expect(asked.creditTerms).toEqual([""]);
  });
});

describe("credit standing", () => {
  it("reads an organisation's purchase again after 10 seconds", async () => {
    const clock = new ManualClock();
    const { port, asked } = fakeLedger(0);
    const credits = new CreditStanding(port, clock, silent);

    await credits.purchased("org_1");
    await credits.purchased("org_1");
    clock.advance(PURCHASE_TTL_MS);
    await credits.purchased("org_1");

    expect(asked.creditTerms).toEqual(["org_1", "org_1"]);
  });

  it("answers no fee and no purchase when the ledger cannot say, and keeps a known answer", async () => {
    const clock = new ManualClock();
    const { port } = fakeLedger(500);
    const credits = new CreditStanding(port, clock, silent);
    expect(await credits.feeBps()).toBe(500);
    port.creditTerms = async () => {
      throw new Error("ledger down");
    };
    clock.advance(11_000);
    await credits.feeBps();
    await new Promise((r) => setImmediate(r));
    expect(await credits.feeBps()).toBe(500);
    expect(await credits.purchased("org_2")).toBeNull();
  });
});
