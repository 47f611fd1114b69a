import { DomainError } from "@router/errors";
import { ledger } from "@router/proto";
import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";

const { LIMIT_MODE_SOFT } = ledger.LimitMode;
const W = USD / 4n;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "admission" });
});
afterAll(() => l.close());
beforeEach(() => l.clock.set(new Date("2026-11-18T10:00:00.000Z")));

const byokRequest = (ceilings: ledger.Ceiling[], extra: Partial<ledger.AdmitRequest> = {}) => ({
  requestId: requestId(),
  orgId: "org_a",
  ceilings,
  worstCaseNanodollars: W,
  isByok: true,
  ...extra,
});

describe("Admit", () => {
  it("admits below a hard ceiling and reserves the worst case so the next request sees it", async () => {
    const key = keyCeiling();
    const res = await l.admit(byokRequest([key]));
    expect(res).toMatchObject({ admitted: true, limitWarning: "" });
    expect(res.holdId).toMatch(/^hold_/);
    expect(await l.used(key)).toBe(W);
  });

  it("refuses a hard key ceiling once in-flight reservations reach the limit, naming the key", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    for (let i = 0; i < 4; i++) expect((await l.admit(byokRequest([key]))).admitted).toBe(true);

    const res = await l.admit(byokRequest([key]));

    expect(res.admitted).toBe(false);
    expect(res.holdId).toBe("");
    expect(res.refusal).toEqual({
      httpStatus: 403,
      code: "budget_exceeded",
      scope: "key",
      subjectId: key.subjectId,
      runStatus: "",
      message: "This key has reached its daily spend limit of $1.00; the limit resets at 2026-11-19T00:00:00.000Z.",
    });
    expect(await l.used(key)).toBe(USD);
  });

  it("refuses a hard ceiling already past its limit after settlement went over", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const first = await l.admit(byokRequest([key]));
    await l.settle({ holdId: first.holdId, listCostNanodollars: 2n * USD });

    const res = await l.admit(byokRequest([key]));

    expect(res.refusal?.code).toBe("budget_exceeded");
    expect(await l.used(key)).toBe(2n * USD);
  });

  it("admits while usage is one nanodollar below a hard limit", async () => {
    const key = keyCeiling({ limitNanodollars: W + 1n });
    await l.admit(byokRequest([key]));
    expect((await l.admit(byokRequest([key]))).admitted).toBe(true);
    expect((await l.admit(byokRequest([key]))).admitted).toBe(false);
  });

  it("refuses a hard ceiling of zero before anything is spent", async () => {
    const key = keyCeiling({ limitNanodollars: 0n });
    const res = await l.admit(byokRequest([key]));
    expect(res.refusal?.scope).toBe("key");
    expect(await l.used(key)).toBe(0n);
  });

  it("admits past a soft ceiling with a warning sentence and still reserves", async () => {
    const key = keyCeiling({ limitNanodollars: W, mode: LIMIT_MODE_SOFT, window: ledger.Window.WINDOW_LIFETIME });
    const below = await l.admit(byokRequest([key]));
    expect(below.limitWarning).toBe("");

    const past = await l.admit(byokRequest([key]));

    expect(past.admitted).toBe(true);
    expect(past.holdId).not.toBe("");
    expect(past.limitWarning).toBe("This key has reached its lifetime spend limit of $0.25.");
    expect(await l.used(key)).toBe(2n * W);
  });

  it("counts nothing for a BYOK request on a ceiling that excludes BYOK spend", async () => {
    const key = keyCeiling({ limitNanodollars: 0n, includeByok: false });
    const res = await l.admit(byokRequest([key]));
    expect(res).toMatchObject({ admitted: true, holdId: "", limitWarning: "" });
    expect(await l.used({ ...key, includeByok: true })).toBe(0n);
  });

  it("counts a non-BYOK request on a ceiling that excludes BYOK spend", async () => {
    const key = keyCeiling({ limitNanodollars: W, includeByok: false });
    expect((await l.admit(byokRequest([key], { isByok: false }))).admitted).toBe(true);
    expect((await l.admit(byokRequest([key], { isByok: false }))).refusal?.code).toBe("budget_exceeded");
  });

  it("reserves on no ceiling when another ceiling of the same request refuses", async () => {
    const key = keyCeiling({ limitNanodollars: 10n * USD });
    const workspace = keyCeiling({ subjectKind: "workspace", subjectId: "ws_full", limitNanodollars: W });
    await l.admit(byokRequest([workspace]));

    const res = await l.admit(byokRequest([key, workspace]));

    expect(res.refusal).toMatchObject({ scope: "workspace", subjectId: "ws_full" });
    expect(res.refusal?.message).toMatch(/^This workspace has reached its daily spend limit of \$0\.25/);
    expect(await l.used(key)).toBe(0n);
    expect(await l.used(workspace)).toBe(W);
  });

  it("checks without reserving on a dry run", async () => {
    const key = keyCeiling({ limitNanodollars: W });
    const check = await l.admit(byokRequest([key], { dryRun: true }));
    expect(check).toMatchObject({ admitted: true, holdId: "" });
    expect(await l.used(key)).toBe(0n);

    await l.admit(byokRequest([key]));
    const refused = await l.admit(byokRequest([key], { dryRun: true }));
    expect(refused.refusal?.code).toBe("budget_exceeded");
    expect(await l.used(key)).toBe(W);
  });

  it("returns the existing hold when the same request is admitted twice", async () => {
    const key = keyCeiling({ limitNanodollars: W, mode: LIMIT_MODE_SOFT });
    await l.admit(byokRequest([key]));
    const req = byokRequest([key]);

    const first = await l.admit(req);
    const again = await l.admit(req);

    expect(again.holdId).toBe(first.holdId);
    expect(again.limitWarning).toBe(first.limitWarning);
    expect(first.limitWarning).not.toBe("");
    expect(await l.used(key)).toBe(2n * W);
  });

  it("refuses a request id already used by another organisation", async () => {
    const req = byokRequest([keyCeiling()]);
    await l.admit(req);
    await expect(l.admit({ ...req, orgId: "org_b" })).rejects.toMatchObject({ code: "conflict" });
  });

  it("rejects a ceiling without a subject id, naming the field", async () => {
    const err = await l.admit(byokRequest([keyCeiling({ subjectId: "" })])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: "invalid_request", message: "ceilings[0].subject_id: is required" });
  });

  it("rejects a negative worst case", async () => {
    await expect(l.admit(byokRequest([keyCeiling()], { worstCaseNanodollars: -1n }))).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});
