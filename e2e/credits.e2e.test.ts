import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import { FakeStripeApi, gatewayClient, startStack, type Stack } from "@router/testkit";

type Client = ReturnType<typeof gatewayClient>;

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString("hex")}`;

/**
 * Credits end to end: the gateway and the ledger as separate processes on Postgres. The balance,
 * purchases and checkout are forwarded with the caller's identity, the fee schedule and the
 * payment processor's events without one; events are signed with the processor SDK's own test
 * helper and pass through the gateway byte for byte, and invoices are read from a stand-in for the
 * processor's API.
 */
describe("credits through the separate-process stack", () => {
  let stack: Stack;
  let stripeApi: FakeStripeApi;
  let mgmt: Client;
  let orgId: string;
  let managementKey: string;

  beforeAll(async () => {
    stripeApi = await new FakeStripeApi().start();
    stack = await startStack({
      providerBaseUrls: {},
      extraEnv: {
        LEDGER_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        LEDGER_STRIPE_SECRET_KEY: "sk_test_e2e",
        LEDGER_STRIPE_API_URL: stripeApi.url,
      },
    });
    const org = await stack.createOrg("Credits Inc");
    orgId = org.orgId;
    managementKey = org.managementKey;
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await stripeApi?.close();
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  const session = (overrides: Record<string, unknown> = {}) => ({
    id: `cs_test_${randomBytes(8).toString("hex")}`,
    object: "checkout.session",
    client_reference_id: orgId,
    currency: "usd",
    amount_total: 2000,
    payment_status: "paid",
    metadata: {},
    customer_details: { address: { country: "DE", state: null } },
    ...overrides,
  });
  const event = (type: string, object: Record<string, unknown>) =>
    JSON.stringify({ id: `evt_${randomBytes(8).toString("hex")}`, object: "event", type, created: Math.floor(Date.now() / 1000), data: { object } });
  const deliver = async (payload: string, secret = WEBHOOK_SECRET) => {
    const res = await fetch(`${stack.gatewayUrl}/v1/billing/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret }) },
      body: payload,
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const total = async () => (await mgmt.get("/v1/credits")).json.data.total_credits as number;

  it("serves the fee schedule to anyone, under a per-address rate limit", async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/credits/fees`);

    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    expect(await res.json()).toEqual({ data: { fee_bps: 0, fee_min: 0, min_purchase: 5, configured: true, purchasable: false } });
  });

  it("refuses checkout with 409 before reading the body, even one that is not JSON", async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/credits/checkout`, {
      method: "POST",
      headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
      body: "{not json",
    });
    const viaClient = await mgmt.post("/v1/credits/checkout", { amount: 25 });

    expect(res.status).toBe(409);
    expect(viaClient.status).toBe(409);
    expect(viaClient.json.error.code).toBe("conflict");
  });

  it("credits a paid session once, however often and however concurrently its event is delivered", async () => {
    const before = await total();
    const payload = event("checkout.session.completed", session());

    const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(payload)));
    const again = await deliver(payload);

    expect([...answers, again].map((a) => a.status)).toEqual(Array(7).fill(200));
    expect(again.json).toEqual({ data: { received: true } });
    expect(await total()).toBe(before + 20);
    expect((await mgmt.get("/v1/credits")).json.data).toMatchObject({ held_credits: 0, available_credits: before + 20, credit_line: 0 });
  });

  it("refuses an event signed with another secret with 400 and credits nothing", async () => {
    const before = await total();

    const res = await deliver(event("checkout.session.completed", session()), "whsec_not_ours");

    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("stripe-signature");
    expect(await total()).toBe(before);
  });

  it("lists the purchase and reads its invoice from the processor", async () => {
    const paid = session({ amount_total: 1500 });
    expect((await deliver(event("checkout.session.completed", paid))).status).toBe(200);
    stripeApi.sessions.set(paid.id, {
      ...paid,
      invoice: { id: "in_e2e", object: "invoice", hosted_invoice_url: "https://invoice.example/e2e", invoice_pdf: null, number: "E2E-1" },
    });

    const list = await mgmt.get("/v1/credits/purchases?limit=1");
    const [purchase] = list.json.data as Array<Record<string, unknown>>;
    const document = await mgmt.get(`/v1/credits/purchases/${purchase!.id as string}/document`);

    expect(purchase).toMatchObject({ provider: "stripe", status: "paid", gross: 15, fee: 0, net: 15, tax_jurisdiction: "DE", has_document: true });
    expect(list.json.next_cursor).toEqual(expect.any(String));
    expect(document.json).toEqual({ data: { kind: "invoice", url: "https://invoice.example/e2e", pdf_url: null, number: "E2E-1" } });
  });

  it("names the bad field of a purchases query", async () => {
    const res = await mgmt.get("/v1/credits/purchases?limit=500");
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("limit");
  });
});
