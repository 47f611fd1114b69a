import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Stripe from "stripe";
import { createPostgresDb } from "@router/db";
import {
  BUNDLED_CATALOG_FILE,
  FakeStripeApi,
  gatewayClient,
  startFakeOpenAi,
  startStack,
  waitFor,
  type FakeUpstream,
  type Stack,
} from "@router/testkit";

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

/** The bundled catalog plus a free row of gpt-4o-mini (`openai/gpt-4o-mini:free`, priced 0), as a file for routing. */
function catalogWithFreeModel(): string {
  const catalog = JSON.parse(readFileSync(BUNDLED_CATALOG_FILE, "utf8")) as { models: Array<Record<string, unknown>>; endpoints: Array<Record<string, unknown>> };
  const model = catalog.models.find((m) => m.id === "openai/gpt-4o-mini");
  const endpoint = catalog.endpoints.find((e) => e.model === "openai/gpt-4o-mini");
  if (!model || !endpoint) throw new Error("the bundled catalog has no openai/gpt-4o-mini");
  catalog.models.push({ ...model, id: FREE_MODEL, canonical_slug: FREE_MODEL, name: "OpenAI: GPT-4o-mini (free)", is_free: true, aliases: [] });
  catalog.endpoints.push({ ...endpoint, id: "ep_openai_gpt-4o-mini_free", model: FREE_MODEL, pricing: { prompt: 0, completion: 0, cached_prompt: null } });
  const file = join(mkdtempSync(join(tmpdir(), "catalog-")), "catalog.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

const PAID_MODEL = "openai/gpt-4o-mini";
const FREE_MODEL = "openai/gpt-4o-mini:free";
/** Five inference requests a minute per organisation that never bought $20 or more; a thousand from $20. */
const RATE_TIERS = JSON.stringify([
  { purchased: 0, per_minute: 5 },
  { purchased: 20, per_minute: 1000 },
]);

/**
 * Credits with a fee, end to end: the operator charges 10 % (at least $0.50 on a purchase) with
 * Stripe configured, and limits inference by lifetime purchase. Checkout goes through the official
 * client to the processor's stand-in; payment arrives as the processor's signed event through the
 * gateway; requests go to a fake OpenAI on the organisation's own key, each holding Router's fee
 * against the balance until its record settles it.
 */
describe("credits with a fee and request-rate tiers, through the separate-process stack", () => {
  let stack: Stack;
  let stripeApi: FakeStripeApi;
  let openai: FakeUpstream;

  beforeAll(async () => {
    stripeApi = await new FakeStripeApi().start();
    openai = await startFakeOpenAi();
    openai.setDefault({ usage: { prompt: 1000, completion: 100 } });
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: {
        LEDGER_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        LEDGER_STRIPE_SECRET_KEY: "sk_test_fees_e2e",
        LEDGER_STRIPE_API_URL: stripeApi.url,
        LEDGER_FEE_BPS: "1000",
        LEDGER_FEE_MIN: "0.50",
        ROUTER_RATE_TIERS: RATE_TIERS,
        ROUTING_CATALOG_FILE: catalogWithFreeModel(),
      },
    });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await stripeApi?.close();
    await openai?.close();
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  /** A new organisation with its OpenAI key and an inference key. */
  async function organisation(name: string) {
    const org = await stack.createOrg(name);
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: `sk-openai-${randomBytes(6).toString("hex")}` })).status).toBe(201);
    const key = await mgmt.post("/v1/keys", { name: "app" });
    expect(key.status).toBe(201);
    const inference = gatewayClient(stack.gatewayUrl, key.json.data.key as string);
    const balance = async () => (await mgmt.get("/v1/credits")).json.data as Record<string, number>;
    const ask = (model: string) => inference.post("/v1/chat/completions", { model, max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    return { ...org, mgmt, inference, balance, ask };
  }

  /** Buys `usd` through checkout and the processor's signed event (delivered through the gateway). */
  async function buy(o: { mgmt: ReturnType<typeof gatewayClient> }, usd: number): Promise<{ fee: number }> {
    const started = await o.mgmt.post("/v1/credits/checkout", { amount: usd });
    expect(started.status).toBe(201);
    const payload = JSON.stringify({
      id: `evt_${randomBytes(8).toString("hex")}`,
      object: "event",
      type: "checkout.session.completed",
      created: Math.floor(Date.now() / 1000),
      data: { object: stripeApi.paid(started.json.data.id as string) },
    });
    const res = await fetch(`${stack.gatewayUrl}/v1/billing/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) },
      body: payload,
    });
    expect(res.status).toBe(200);
    return { fee: started.json.data.fee as number };
  }

  it("makes credits purchasable and starts checkout at the processor, crediting the net once paid", async () => {
    const o = await organisation("Checkout Ltd");
    expect((await fetch(`${stack.gatewayUrl}/v1/credits/fees`).then((r) => r.json())) as unknown).toEqual({
      data: { fee_bps: 1000, fee_min: 0.5, min_purchase: 5, configured: true, purchasable: true },
    });

    const started = await o.mgmt.post("/v1/credits/checkout", { amount: 25 });
    const tooSmall = await o.mgmt.post("/v1/credits/checkout", { amount: 4 });

    expect(started.status).toBe(201);
    expect(started.json.data).toEqual({ url: expect.stringContaining(`${stripeApi.url}/c/pay/`), id: expect.any(String), fee: 2.5 });
    expect(stripeApi.sessions.get(started.json.data.id as string)).toMatchObject({ amount_total: 2500, client_reference_id: o.orgId });
    expect(stripeApi.requests.some((r) => r.startsWith("POST /v1/checkout/sessions Bearer sk_test_fees_e2e"))).toBe(true);
    expect(tooSmall.status).toBe(400);
    expect(tooSmall.json.error.details.field).toBe("amount");

    expect((await buy(o, 10)).fee).toBe(1);
    expect(await o.balance()).toEqual({ total_credits: 9, held_credits: 0, available_credits: 9, credit_line: 0 });
  });

  it("holds each request's fee while it runs and settles it to 10 % of its list cost", async () => {
    const o = await organisation("Fees Ltd");
    await buy(o, 10); // 9 credited
    // A million prompt tokens of gpt-4o-mini list at $0.15: the fee is $0.015.
    openai.script({ usage: { prompt: 1_000_000, completion: 0 }, headersDelayMs: 1_500 });

    const answer = o.ask(PAID_MODEL);
    await waitFor(async () => ((await o.balance()).held_credits ?? 0) > 0, { timeoutMs: 5_000, intervalMs: 100, what: "the fee to be held" });
    const answered = await answer;
    expect(answered.status).toBe(200);

    await waitFor(async () => ((await o.balance()).total_credits ?? 9) < 9, { timeoutMs: 15_000, intervalMs: 200, what: "the fee to be settled" });
    expect(await o.balance()).toEqual({ total_credits: 8.985, held_credits: 0, available_credits: 8.985, credit_line: 0 });
    // The request's record shows the same fee apart from the provider's list price.
    const record = await o.inference.get(`/v1/generation?id=${answered.json.id as string}`);
    expect(record.json.data).toMatchObject({ list_cost: 0.15, fee: 0.015, total_cost: 0.015 });
  });

  it("refuses with 402 a request whose fee the balance cannot cover, and lets the balance go to minus the credit line", async () => {
    const o = await organisation("Empty Ltd");

    const refused = await o.ask(PAID_MODEL);

    expect(refused.status).toBe(402);
    expect(refused.json.error).toMatchObject({ code: "insufficient_credits", details: { scope: "credits" } });
    // An enterprise agreement's credit line (set by the operator in the ledger's table).
    const db = createPostgresDb({ url: stack.env.DATABASE_URL!, schema: "ledger", max: 1 });
    try {
      await db.query("INSERT INTO credit_balances (org_id, credit_line_nanodollars, updated_at) VALUES ($1, 1000000000, now())", [o.orgId]);
    } finally {
      await db.close();
    }
    expect((await o.ask(PAID_MODEL)).status).toBe(200);
  });

  it("refuses every request, free models included, while usage past the holds left the balance negative; a top-up lets them through", async () => {
    const o = await organisation("Overdrawn Ltd");
    await buy(o, 5); // 4.50 credited
    expect((await o.ask(FREE_MODEL)).status).toBe(200);
    // The provider reports far more than the worst case held: $60 list, a $6 fee.
    openai.script({ usage: { prompt: 400_000_000, completion: 0 } });
    expect((await o.ask(PAID_MODEL)).status).toBe(200);
    await waitFor(async () => ((await o.balance()).total_credits ?? 0) < 0, { timeoutMs: 15_000, intervalMs: 200, what: "the balance to go negative" });

    const free = await o.ask(FREE_MODEL);

    expect(free.status).toBe(402);
    expect(free.json.error).toMatchObject({ code: "insufficient_credits", details: { scope: "credits" } });
    // The route preview runs the same gates: it says the request would not dispatch, and why.
    const preview = await o.inference.post("/v1/routing/preview", { model: FREE_MODEL });
    expect(preview.json.data).toMatchObject({ would_dispatch: false, refusal: { status: 402, code: "insufficient_credits" } });
    await buy(o, 5);
    expect((await o.ask(FREE_MODEL)).status).toBe(200);
  });

  it("limits inference by lifetime purchase with 429 and Retry-After, shared across gateways, and raises the ceiling after a top-up", async () => {
    const o = await organisation("Tiers Ltd");
    await buy(o, 5); // $4.50 bought: the first tier, 5 a minute
    const replica = gatewayClient(await stack.startGatewayReplica(), (await o.mgmt.post("/v1/keys", { name: "replica" })).json.data.key as string);
    const ask = (client: ReturnType<typeof gatewayClient>) =>
      client.post("/v1/chat/completions", { model: FREE_MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }] });

    const allowed = [await ask(o.inference), await ask(replica), await ask(o.inference), await ask(replica), await ask(o.inference)];
    const limited = await ask(replica);

    expect(allowed.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: "rate_limited", details: { limit: "inference", window: "minute", max_requests: 5 } });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Spending does not lower the ceiling; buying $25 more ($22.50 net, $27 in all) raises it,
    // on every gateway within the 10-second rule.
    await buy(o, 25);
    await waitFor(async () => (await ask(o.inference)).status === 200, { timeoutMs: 15_000, intervalMs: 1_000, what: "the higher tier" });
    await waitFor(async () => (await ask(replica)).status === 200, { timeoutMs: 15_000, intervalMs: 1_000, what: "the higher tier on the replica" });
  });
});
