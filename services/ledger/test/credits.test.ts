import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import { signIdentity } from "@router/http-kit";
import { FakeStripeApi } from "@router/testkit";
import { identity, orgId, startTestLedger, TEST_IDENTITY, type Caller, type TestLedger } from "./ledger-fixture";

const WEBHOOK_SECRET = "whsec_credits_test_secret";

const stripeApi = new FakeStripeApi();
let l: TestLedger;
beforeAll(async () => {
  await stripeApi.start();
  l = await startTestLedger({
    label: "credits",
    stripe: { secretKey: "sk_test_credits", webhookSecret: WEBHOOK_SECRET, apiUrl: stripeApi.url },
  });
});
afterAll(async () => {
  await l.close();
  await stripeApi.close();
});

const sessionId = () => `cs_test_${randomBytes(8).toString("hex")}`;
const eventId = () => `evt_${randomBytes(8).toString("hex")}`;

/** A checkout session of `org` as the processor sends it: $25.00, paid, a Californian address. */
function checkoutSession(org: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: sessionId(),
    object: "checkout.session",
    client_reference_id: org,
    currency: "usd",
    amount_total: 2500,
    payment_status: "paid",
    metadata: {},
    customer_details: { address: { country: "us", state: "ca" } },
    ...overrides,
  };
}

function eventPayload(type: string, object: Record<string, unknown>, id = eventId()): string {
  return JSON.stringify({ id, object: "event", type, api_version: "2025-09-30", created: 1_795_000_000, data: { object } });
}

/** The signature header the processor would send, made with its own SDK's test helper, at the ledger's clock. */
function signed(payload: string, opts: { secret?: string; atMs?: number } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? WEBHOOK_SECRET,
    timestamp: Math.floor((opts.atMs ?? l.clock.now().getTime()) / 1000),
  });
}

async function deliver(payload: string, signature: string | null = signed(payload)) {
  const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/billing/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(signature === null ? {} : { "stripe-signature": signature }) },
    body: payload,
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

const owner = (org: string): Caller => ({ orgId: org });
const balance = async (org: string) => (await l.http("GET", "/v1/credits", owner(org))).json.data as Record<string, number>;
const purchases = async (org: string, query = "") => (await l.http("GET", `/v1/credits/purchases${query}`, owner(org))).json;

describe("the balance and the fee schedule", () => {
  it("reports a zero balance for an organisation that never bought credits", async () => {
    const res = await l.http("GET", "/v1/credits", { orgId: orgId(), role: "billing" });

    expect(res).toEqual({
      status: 200,
      json: { data: { total_credits: 0, held_credits: 0, available_credits: 0, credit_line: 0 } },
    });
  });

  it("serves the fee schedule without a caller: not purchasable and no fee while every model is BYOK-only", async () => {
    const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/credits/fees`);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { fee_bps: 0, fee_min: 0, min_purchase: 5, configured: true, purchasable: false } });
  });

  it("lets only roles with billing:read see the balance, and never an inference key", async () => {
    const org = orgId();
    expect((await l.http("GET", "/v1/credits", { orgId: org, role: "member" })).status).toBe(200);
    expect((await l.http("GET", "/v1/credits", { orgId: org, role: "readonly" })).status).toBe(403);
    expect((await l.http("GET", "/v1/credits", { orgId: org, credential: "inference" })).status).toBe(403);
  });
});

describe("checkout", () => {
  it("refuses with 409 while credits cannot be spent, whatever the body", async () => {
    const org = orgId();
    const valid = await l.http("POST", "/v1/credits/checkout", { orgId: org, role: "billing" }, { amount: 20 });
    const nonsense = await l.http("POST", "/v1/credits/checkout", { orgId: org }, { amount: "lots", other: true });

    for (const res of [valid, nonsense]) {
      expect(res.status).toBe(409);
      expect(res.json.error).toMatchObject({ code: "conflict", details: { purchasable: false } });
    }
    expect((await l.http("POST", "/v1/credits/checkout", owner(org))).status).toBe(409);
  });

  it("answers 409 before reading the body: a body that is not even JSON gets the same refusal", async () => {
    const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/credits/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-router-identity": await signIdentity(identity(owner(orgId())), TEST_IDENTITY.signingKey) },
      body: "{not json",
    });

    expect(res.status).toBe(409);
  });

  it("needs billing:write: a developer (billing:read only) is refused with 403", async () => {
    const res = await l.http("POST", "/v1/credits/checkout", { orgId: orgId(), role: "member" }, { amount: 20 });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("permission_denied");
  });
});

describe("payment-processor events", () => {
  it("credits a paid completed session's net amount and lists the purchase", async () => {
    const org = orgId();
    const session = checkoutSession(org);

    const res = await deliver(eventPayload("checkout.session.completed", session));

    expect(res).toEqual({ status: 200, json: { data: { received: true } } });
    expect(await balance(org)).toEqual({ total_credits: 25, held_credits: 0, available_credits: 25, credit_line: 0 });
    const list = await purchases(org);
    expect(list.next_cursor).toBeNull();
    expect(list.data).toEqual([
      {
        id: expect.stringMatching(/^pur_/),
        created_at: "2026-11-18T10:00:00.000Z",
        provider: "stripe",
        status: "paid",
        gross: 25,
        fee: 0,
        net: 25,
        tax_jurisdiction: "US-CA",
        has_document: true,
      },
    ]);
  });

  it("credits a session once when the same event is delivered twice", async () => {
    const org = orgId();
    const payload = eventPayload("checkout.session.completed", checkoutSession(org));

    const first = await deliver(payload);
    const replay = await deliver(payload);

    expect([first.status, replay.status]).toEqual([200, 200]);
    expect((await balance(org)).total_credits).toBe(25);
    expect((await purchases(org)).data).toHaveLength(1);
  });

  it("credits a session once when its event is replayed many times at once", async () => {
    const org = orgId();
    const payload = eventPayload("checkout.session.completed", checkoutSession(org, { amount_total: 1234 }));

    const answers = await Promise.all(Array.from({ length: 12 }, () => deliver(payload)));

    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect((await balance(org)).total_credits).toBe(12.34);
    expect((await purchases(org)).data).toHaveLength(1);
  });

  it("credits a session once across its two crediting events (completed, then async payment succeeded)", async () => {
    const org = orgId();
    const session = checkoutSession(org);

    await Promise.all([
      deliver(eventPayload("checkout.session.completed", session)),
      deliver(eventPayload("checkout.session.async_payment_succeeded", session)),
    ]);

    expect((await balance(org)).total_credits).toBe(25);
  });

  it("records an unpaid completed session as pending, and credits it when its delayed payment succeeds", async () => {
    const org = orgId();
    const session = checkoutSession(org, { payment_status: "unpaid" });

    await deliver(eventPayload("checkout.session.completed", session));
    const pending = await purchases(org);
    await deliver(eventPayload("checkout.session.async_payment_succeeded", { ...session, payment_status: "paid" }));

    expect(pending.data).toMatchObject([{ status: "pending", has_document: false }]);
    expect((await balance(org)).total_credits).toBe(25);
    expect((await purchases(org)).data).toMatchObject([{ status: "paid", id: pending.data[0].id }]);
  });

  it("credits nothing for a failed delayed payment and records the purchase as failed", async () => {
    const org = orgId();
    const session = checkoutSession(org, { payment_status: "unpaid" });

    await deliver(eventPayload("checkout.session.completed", session));
    const failed = await deliver(eventPayload("checkout.session.async_payment_failed", session));

    expect(failed.status).toBe(200);
    expect((await balance(org)).total_credits).toBe(0);
    expect((await purchases(org)).data).toMatchObject([{ status: "failed", has_document: false }]);
  });

  it("credits nothing when a crediting event's session is not paid", async () => {
    const org = orgId();
    await deliver(eventPayload("checkout.session.async_payment_succeeded", checkoutSession(org, { payment_status: "no_payment_required" })));

    expect((await balance(org)).total_credits).toBe(0);
    expect((await purchases(org)).data).toEqual([]);
  });

  it("acknowledges every other event with 200 and changes nothing", async () => {
    const org = orgId();
    const res = await deliver(eventPayload("customer.created", { id: "cus_1", object: "customer", client_reference_id: org }));

    expect(res).toEqual({ status: 200, json: { data: { received: true } } });
    expect((await purchases(org)).data).toEqual([]);
  });

  it("keeps the fee checkout quoted in the session's metadata", async () => {
    const org = orgId();
    await deliver(eventPayload("checkout.session.completed", checkoutSession(org, { metadata: { fee_nanodollars: "1500000000" } })));

    expect((await purchases(org)).data).toMatchObject([{ gross: 25, fee: 1.5, net: 23.5 }]);
    expect((await balance(org)).total_credits).toBe(23.5);
  });

  describe("a bad signature is a 400 naming the header and changes nothing", () => {
    const cases: Array<[string, (payload: string) => { body: string; signature: string | null }]> = [
      ["no signature", (p) => ({ body: p, signature: null })],
      ["a signature made with another secret", (p) => ({ body: p, signature: signed(p, { secret: "whsec_someone_else" }) })],
      ["a body changed after signing", (p) => ({ body: p.replace('"amount_total":2500', '"amount_total":250000'), signature: signed(p) })],
      ["a signature older than five minutes", (p) => ({ body: p, signature: signed(p, { atMs: l.clock.now().getTime() - 301_000 }) })],
      ["a header that is no signature", (p) => ({ body: p, signature: "t=abc,v1=nothex" })],
    ];

    it.each(cases)("%s", async (_name, tamper) => {
      const org = orgId();
      const { body, signature } = tamper(eventPayload("checkout.session.completed", checkoutSession(org)));

      const res = await deliver(body, signature);

      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "stripe-signature" } });
      expect((await balance(org)).total_credits).toBe(0);
      expect((await purchases(org)).data).toEqual([]);
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["no organisation", { client_reference_id: null }, "data.object.client_reference_id"],
    ["another currency", { currency: "eur" }, "data.object.currency"],
    ["a fractional amount", { amount_total: 12.5 }, "data.object.amount_total"],
    ["an unknown payment status", { payment_status: "maybe" }, "data.object.payment_status"],
    ["a fee that is not integer nanodollars", { metadata: { fee_nanodollars: "1.5" } }, "data.object.metadata.fee_nanodollars"],
  ])("refuses a signed crediting event with %s with a 400 naming the field", async (_name, overrides, field) => {
    const org = orgId();
    const res = await deliver(eventPayload("checkout.session.completed", checkoutSession(org, overrides)));

    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe(field);
    expect((await balance(org)).total_credits).toBe(0);
  });

  it("refuses a signed body that is not JSON with a 400 naming the body", async () => {
    const res = await deliver("not json", signed("not json"));
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("body");
  });
});

describe("purchases and their documents", () => {
  async function paidPurchase(org: string, overrides: Record<string, unknown> = {}) {
    const session = checkoutSession(org, overrides);
    await deliver(eventPayload("checkout.session.completed", session));
    return session;
  }

  it("pages an organisation's purchases newest first and shows no other organisation's", async () => {
    const org = orgId();
    for (const cents of [100, 200, 300]) {
      await paidPurchase(org, { amount_total: cents });
      l.clock.advance(1000);
    }
    await paidPurchase(orgId());

    const first = await purchases(org, "?limit=2");
    const second = await purchases(org, `?limit=2&cursor=${first.next_cursor as string}`);

    expect(first.data.map((p: { gross: number }) => p.gross)).toEqual([3, 2]);
    expect(second.data.map((p: { gross: number }) => p.gross)).toEqual([1]);
    expect(second.next_cursor).toBeNull();
    expect((await purchases(orgId())).data).toEqual([]);
  });

  it.each<[string, string, string]>([
    ["a limit of 0", "?limit=0", "limit"],
    ["a limit past 100", "?limit=101", "limit"],
    ["a limit that is not a number", "?limit=ten", "limit"],
    ["a cursor this list never returned", "?cursor=nonsense", "cursor"],
    ["another organisation's purchase as the cursor", "?cursor=pur_unknown", "cursor"],
  ])("refuses %s with a 400 naming it", async (_name, query, field) => {
    const res = await l.http("GET", `/v1/credits/purchases${query}`, owner(orgId()));
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe(field);
  });

  it("reads a paid purchase's invoice from the processor on demand", async () => {
    const org = orgId();
    const session = await paidPurchase(org);
    stripeApi.sessions.set(session.id as string, {
      ...session,
      invoice: { id: "in_1", object: "invoice", hosted_invoice_url: "https://invoice.example/i/1", invoice_pdf: "https://invoice.example/i/1.pdf", number: "RT-0001" },
    });
    const [purchase] = (await purchases(org)).data;

    const res = await l.http("GET", `/v1/credits/purchases/${purchase.id as string}/document`, { orgId: org, role: "billing" });

    expect(res).toEqual({
      status: 200,
      json: { data: { kind: "invoice", url: "https://invoice.example/i/1", pdf_url: "https://invoice.example/i/1.pdf", number: "RT-0001" } },
    });
    expect(stripeApi.requests.at(-1)).toMatch(new RegExp(`^GET /v1/checkout/sessions/${session.id as string}\\?.*expand.*Bearer sk_test_credits$`));
  });

  it("falls back to the payment's receipt when the session has no invoice", async () => {
    const org = orgId();
    const session = await paidPurchase(org);
    stripeApi.sessions.set(session.id as string, {
      ...session,
      invoice: null,
      payment_intent: { id: "pi_1", object: "payment_intent", latest_charge: { id: "ch_1", object: "charge", receipt_url: "https://pay.example/r/1", receipt_number: null } },
    });
    const [purchase] = (await purchases(org)).data;

    const res = await l.http("GET", `/v1/credits/purchases/${purchase.id as string}/document`, owner(org));

    expect(res.json.data).toEqual({ kind: "receipt", url: "https://pay.example/r/1", pdf_url: null, number: null });
  });

  it("answers 404 for another organisation's purchase, a pending one, and one the processor has no document for", async () => {
    const org = orgId();
    const paid = await paidPurchase(org);
    stripeApi.sessions.set(paid.id as string, { ...paid, invoice: null, payment_intent: null });
    l.clock.advance(1000);
    await deliver(eventPayload("checkout.session.completed", checkoutSession(org, { payment_status: "unpaid" })));
    const [pending, withoutDocument] = (await purchases(org)).data as Array<{ id: string; status: string }>;

    const foreign = await l.http("GET", `/v1/credits/purchases/${withoutDocument!.id}/document`, owner(orgId()));
    const notPaid = await l.http("GET", `/v1/credits/purchases/${pending!.id}/document`, owner(org));
    const none = await l.http("GET", `/v1/credits/purchases/${withoutDocument!.id}/document`, owner(org));

    expect([pending!.status, withoutDocument!.status]).toEqual(["pending", "paid"]);
    expect([foreign.status, notPaid.status, none.status]).toEqual([404, 404, 404]);
  });

  it("refuses a malformed purchase id with a 400 naming it", async () => {
    const res = await l.http("GET", "/v1/credits/purchases/nope/document", owner(orgId()));
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("id");
  });
});

describe("without a payment processor configured", () => {
  let bare: TestLedger;
  beforeAll(async () => {
    bare = await startTestLedger({ label: "credits_bare" });
  });
  afterAll(() => bare.close());

  it("reports the fee schedule as not configured", async () => {
    const res = await fetch(`http://127.0.0.1:${bare.httpPort}/v1/credits/fees`);
    expect(((await res.json()) as { data: Record<string, unknown> }).data).toMatchObject({ configured: false, purchasable: false });
  });

  it("refuses every event as the caller's fault (400 naming the signature, never a 5xx) and credits nothing", async () => {
    const org = orgId();
    const payload = eventPayload("checkout.session.completed", checkoutSession(org));
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${bare.httpPort}/v1/billing/webhook`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: payload });

    const answers = await Promise.all([post({ "stripe-signature": signed(payload) }), post({ "stripe-signature": "t=1,v1=00" }), post({})]);

    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { details: { field: string } } }).error.details.field).toBe("stripe-signature");
    }
    expect((await bare.http("GET", "/v1/credits", owner(org))).json.data.total_credits).toBe(0);
  });
});
