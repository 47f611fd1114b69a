import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import Stripe from "stripe";
import { signIdentity } from "@router/http-kit";
import { FakeStripeApi } from "@router/testkit";
import { identity, keyCeiling, orgId, requestId, startTestLedger, TEST_IDENTITY, USD, type Caller, type TestLedger } from "./ledger-fixture";

const WEBHOOK_SECRET = "whsec_credit_fees_test";
/** 5 % of each request's list cost and of each purchase (at least $0.80); purchases from $5. */
const FEES = { feeBps: 500, feeMin: 800_000_000n, minPurchase: 5n * USD };

const stripeApi = new FakeStripeApi();
let l: TestLedger;
beforeAll(async () => {
  await stripeApi.start();
  l = await startTestLedger({
    label: "credit_fees",
    stripe: { secretKey: "sk_test_fees", webhookSecret: WEBHOOK_SECRET, apiUrl: stripeApi.url },
    fees: FEES,
    sweepIntervalMs: 50,
  });
});
afterAll(async () => {
  await l?.close();
  await stripeApi.close();
});

const owner = (org: string): Caller => ({ orgId: org });
const balance = async (org: string) => (await l.http("GET", "/v1/credits", owner(org))).json.data as Record<string, number>;

/** Delivers the processor's signed event reporting `session` paid. */
async function deliverPaid(session: Record<string, unknown>): Promise<number> {
  const payload = JSON.stringify({
    id: `evt_${randomBytes(8).toString("hex")}`,
    object: "event",
    type: "checkout.session.completed",
    created: Math.floor(l.clock.now().getTime() / 1000),
    data: { object: session },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(l.clock.now().getTime() / 1000) });
  const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/billing/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: payload,
  });
  return res.status;
}

/** Buys `usd` of credits for `org` through checkout and the processor's paid event. */
async function buy(org: string, usd: number): Promise<void> {
  const started = await l.http("POST", "/v1/credits/checkout", owner(org), { amount: usd });
  expect(started.status).toBe(201);
  expect(await deliverPaid(stripeApi.paid(started.json.data.id as string))).toBe(200);
}

/** A request's Admit as the gateway sends it: every request is BYOK. */
const admit = (org: string, worstCase: bigint, extra: Record<string, unknown> = {}) =>
  l.admit({ requestId: requestId(), orgId: org, worstCaseNanodollars: worstCase, isByok: true, ...extra });

/** The request's record (its settlement), as the gateway sends it with CloseHolds. */
const record = (org: string, id: string, listCost: bigint, holdId = "") =>
  l.closeHolds({ settlements: [{ holdId, orgId: org, requestId: id, listCostNanodollars: listCost, isByok: true }] });

describe("the fee schedule and checkout", () => {
  it("reports the configured schedule, purchasable with a processor", async () => {
    const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/credits/fees`);
    expect(((await res.json()) as { data: unknown }).data).toEqual({ fee_bps: 500, fee_min: 0.8, min_purchase: 5, configured: true, purchasable: true });
  });

  it("starts a hosted checkout through the processor's API, quoting the fee, and credits the net once paid", async () => {
    const org = orgId();

    const started = await l.http("POST", "/v1/credits/checkout", owner(org), { amount: 25 });

    expect(started.status).toBe(201);
    expect(started.json.data).toEqual({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/), id: expect.any(String), fee: 1.25 });
    const session = stripeApi.sessions.get(started.json.data.id as string)!;
    expect(session).toMatchObject({ amount_total: 2500, client_reference_id: org, metadata: { fee_nanodollars: "1250000000" }, payment_status: "unpaid" });
    expect(await balance(org)).toMatchObject({ total_credits: 0 });

    expect(await deliverPaid(stripeApi.paid(session.id as string))).toBe(200);

    expect(await balance(org)).toEqual({ total_credits: 23.75, held_credits: 0, available_credits: 23.75, credit_line: 0 });
    const [purchase] = (await l.http("GET", "/v1/credits/purchases", owner(org))).json.data as Array<Record<string, unknown>>;
    expect(purchase).toMatchObject({ status: "paid", gross: 25, fee: 1.25, net: 23.75, tax_jurisdiction: "US-CA" });
  });

  it("charges at least the minimum fee on a small purchase", async () => {
    const started = await l.http("POST", "/v1/credits/checkout", owner(orgId()), { amount: 5 });
    expect(started.json.data.fee).toBe(0.8);
  });

  it.each([
    [{ amount: 4.99 }, "amount"],
    [{ amount: 25.001 }, "amount"],
    [{ amount: "25" }, "amount"],
    [{ amount: 1_000_000 }, "amount"],
    [{}, "amount"],
    [{ amount: 25, currency: "eur" }, "currency"],
  ])("refuses checkout body %j with a 400 naming %s, and makes no session", async (body, field) => {
    const before = stripeApi.sessions.size;
    const res = await l.http("POST", "/v1/credits/checkout", owner(orgId()), body);
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe(field);
    expect(stripeApi.sessions.size).toBe(before);
  });

  it("refuses a checkout body that is not JSON with a 400 naming the body", async () => {
    const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/credits/checkout`, {
      method: "POST",
      headers: { "x-router-identity": await signIdentity(identity(owner(orgId())), TEST_IDENTITY.signingKey) },
      body: "{amount",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { details: { field: string } } }).error.details.field).toBe("body");
  });
});

describe("a request's fee held against the balance", () => {
  it("holds the fee on the worst case at Admit and settles it to the fee on the actual cost", async () => {
    const org = orgId();
    await buy(org, 25); // 23.75 credited
    const id = requestId();

    const admitted = await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: 10n * USD, isByok: true });

    expect(admitted).toMatchObject({ admitted: true, purchasedNanodollars: 23_750_000_000n });
    expect(await balance(org)).toEqual({ total_credits: 23.75, held_credits: 0.5, available_credits: 23.25, credit_line: 0 });

    await record(org, id, 2n * USD);

    expect(await balance(org)).toEqual({ total_credits: 23.65, held_credits: 0, available_credits: 23.65, credit_line: 0 });
    // Recorded twice, charged once.
    await record(org, id, 2n * USD);
    expect((await balance(org)).total_credits).toBe(23.65);
  });

  it("holds once when the same request is admitted again", async () => {
    const org = orgId();
    await buy(org, 10);
    const id = requestId();

    await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: USD, isByok: true });
    await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: USD, isByok: true });

    expect((await balance(org)).held_credits).toBe(0.05);
  });

  it("refuses with 402 insufficient_credits a fee that would take the balance below zero; a free model's request passes", async () => {
    const org = orgId();

    const paid = await admit(org, USD);
    const free = await admit(org, 0n);

    expect(paid).toMatchObject({ admitted: false, refusal: { httpStatus: 402, code: "insufficient_credits", scope: "credits" } });
    expect(paid.refusal?.message).toMatch(/buy credits/);
    expect(free.admitted).toBe(true);
    expect(await balance(org)).toEqual({ total_credits: 0, held_credits: 0, available_credits: 0, credit_line: 0 });
  });

  it("counts what in-flight requests hold: the request whose fee no longer fits is refused", async () => {
    const org = orgId();
    await buy(org, 5); // 4.20 credited (the $0.80 minimum fee)

    const first = await admit(org, 80n * USD); // holds 4.00
    const second = await admit(org, 10n * USD); // 0.50 more would leave -0.30

    expect(first.admitted).toBe(true);
    expect(second.refusal).toMatchObject({ httpStatus: 402, code: "insufficient_credits" });
    expect((await balance(org)).held_credits).toBe(4);
  });

  it("lets usage past the hold take the balance negative, and then refuses every request, free models included, until topped up", async () => {
    const org = orgId();
    await buy(org, 5); // 4.20
    const id = requestId();
    expect((await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: USD, isByok: true })).admitted).toBe(true);

    // The provider reported far more than the worst case: a $100 list cost is a $5 fee.
    await record(org, id, 100n * USD);

    expect(await balance(org)).toMatchObject({ total_credits: -0.8, held_credits: 0 });
    expect((await admit(org, 0n)).refusal).toMatchObject({ httpStatus: 402, code: "insufficient_credits", scope: "credits" });
    expect((await admit(org, 0n, { dryRun: true, requestId: "" })).admitted).toBe(false);

    await buy(org, 5);
    expect((await admit(org, 0n)).admitted).toBe(true);
  });

  it("lets the balance go down to minus the credit line an agreement sets, and no further", async () => {
    const org = orgId();
    await l.db.query("INSERT INTO credit_balances (org_id, credit_line_nanodollars, updated_at) VALUES ($1, $2, now())", [org, 2n * USD]);

    const within = await admit(org, 20n * USD); // holds 1.00
    const past = await admit(org, 30n * USD); // 1.50 more: -2.50

    expect(within.admitted).toBe(true);
    expect(past.refusal).toMatchObject({ httpStatus: 402, code: "insufficient_credits" });
    expect(past.refusal?.message).toMatch(/credit line of 2 USD/);
  });

  it("gives the hold back when a spend limit refuses after it", async () => {
    const org = orgId();
    await buy(org, 10);

    const refused = await admit(org, USD, { ceilings: [keyCeiling({ limitNanodollars: 0n })] });

    expect(refused.refusal).toMatchObject({ httpStatus: 403, code: "budget_exceeded", scope: "key" });
    expect((await balance(org)).held_credits).toBe(0);
  });

  it("settles a request admitted with a key ceiling through its hold's settlement too", async () => {
    const org = orgId();
    await buy(org, 10); // 9.20
    const id = requestId();
    const admitted = await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: 2n * USD, isByok: true, ceilings: [keyCeiling({ limitNanodollars: 100n * USD })] });
    expect(admitted.holdId).not.toBe("");

    await record(org, id, USD, admitted.holdId);

    expect(await balance(org)).toMatchObject({ total_credits: 9.15, held_credits: 0 });
  });

  it("charges a hold its gateway never reported what it held, and a late record replaces the charge with the fee", async () => {
    const org = orgId();
    await buy(org, 10); // 9.20
    const id = requestId();
    await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: 20n * USD, isByok: true }); // holds 1.00

    l.clock.advance(31 * 60_000);
    for (let i = 0; i < 100 && (await balance(org)).held_credits !== 0; i++) await sleep(50);

    expect(await balance(org)).toMatchObject({ total_credits: 8.2, held_credits: 0 });
    await record(org, id, 2n * USD); // fee 0.10
    expect(await balance(org)).toMatchObject({ total_credits: 9.1, held_credits: 0 });
  });
});

describe("credit terms for the gateway", () => {
  it("answers the fee and the lifetime purchase, which spending does not lower", async () => {
    const org = orgId();
    await buy(org, 25);
    const id = requestId();
    await l.admit({ requestId: id, orgId: org, worstCaseNanodollars: USD, isByok: true });
    await record(org, id, 100n * USD);

    expect(await l.creditTerms(org)).toEqual({ feeBps: 500, purchasedNanodollars: 23_750_000_000n });
    expect(await l.creditTerms("")).toEqual({ feeBps: 500, purchasedNanodollars: 0n });
  });
});

describe("without a fee (the default)", () => {
  let bare: TestLedger;
  beforeAll(async () => {
    bare = await startTestLedger({ label: "credit_fees_none" });
  });
  afterAll(() => bare?.close());

  it("holds nothing: a request of an organisation with no credits is admitted and its record charges nothing", async () => {
    const org = orgId();
    const id = requestId();

    const admitted = await bare.admit({ requestId: id, orgId: org, worstCaseNanodollars: 100n * USD, isByok: true });
    await bare.closeHolds({ settlements: [{ holdId: "", orgId: org, requestId: id, listCostNanodollars: 50n * USD, isByok: true }] });

    expect(admitted).toMatchObject({ admitted: true, holdId: "" });
    expect(admitted.purchasedNanodollars).toBeUndefined();
    expect((await bare.http("GET", "/v1/credits", owner(org))).json.data).toEqual({ total_credits: 0, held_credits: 0, available_credits: 0, credit_line: 0 });
    expect(await bare.creditTerms(org)).toEqual({ feeBps: 0, purchasedNanodollars: 0n });
  });
});
