import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The parameters of `POST /v1/checkout/sessions` this stand-in knows; Stripe refuses any other. */
const SESSION_PARAMS = new Set(["mode", "client_reference_id", "line_items", "metadata", "success_url", "cancel_url", "billing_address_collection", "customer_email"]);

/**
 * A stand-in for the payment processor's (Stripe's) API on loopback, in Stripe's wire format:
 * - `GET /v1/checkout/sessions/{id}` answers the session stored under that id (expansions included,
 *   as the test stores them), 404 with Stripe's error body otherwise;
 * - `POST /v1/checkout/sessions` (form-encoded, as the official client sends it) makes an open,
 *   unpaid session with a hosted `url`, refusing what Stripe refuses: no secret key (401), a missing
 *   `mode` or `line_items`, an unknown parameter, a currency other than usd, an amount under 50 cents
 *   or not whole cents, metadata values over 500 characters (400 `invalid_request_error`).
 * `paid(id, address)` is the session as Stripe reports it once paid, for a signed event.
 * Every request is kept as `METHOD url authorization`.
 */
export class FakeStripeApi {
  readonly sessions = new Map<string, Record<string, unknown>>();
  readonly requests: string[] = [];
  private server: Server | undefined;
  private made = 0;
  url = "";

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ""}`);
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json", "request-id": "req_fake" });
        res.end(JSON.stringify(body));
      };
      if (!/^Bearer sk_(test|live)_\S+$/.test(req.headers.authorization ?? "")) {
        answer(401, { error: { type: "invalid_request_error", message: "You did not provide an API key." } });
        return;
      }
      if (req.method === "POST" && (req.url ?? "").split("?")[0] === "/v1/checkout/sessions") {
        let text = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => (text += chunk));
        req.on("end", () => {
          const made = this.createSession(text);
          answer(made.status, made.body);
        });
        return;
      }
      const id = /^\/v1\/checkout\/sessions\/([^/?]+)/.exec(req.url ?? "")?.[1];
      const session = req.method === "GET" && id ? this.sessions.get(decodeURIComponent(id)) : undefined;
      answer(session ? 200 : 404, session ?? { error: { type: "invalid_request_error", message: "No such checkout.session" } });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** The session `id` as Stripe reports it once paid (completed, `paid`, the customer's address). */
  paid(id: string, address: { country: string; state?: string | null } = { country: "US", state: "CA" }): Record<string, unknown> {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`no checkout session ${id}`);
    const paid = { ...session, status: "complete", payment_status: "paid", customer_details: { address: { state: null, ...address } } };
    this.sessions.set(id, paid);
    return paid;
  }

  private createSession(text: string): { status: number; body: unknown } {
    const refuse = (message: string, param?: string) => ({ status: 400, body: { error: { type: "invalid_request_error", message, ...(param ? { param } : {}) } } });
    const params = formFields(text);
    for (const name of Object.keys(params)) if (!SESSION_PARAMS.has(name)) return refuse(`Received unknown parameter: ${name}`, name);
    if (params.mode !== "payment") return refuse(params.mode === undefined ? "Missing required param: mode." : "Invalid mode", "mode");
    const items = params.line_items;
    if (!Array.isArray(items) || items.length === 0) return refuse("Missing required param: line_items.", "line_items");
    let total = 0;
    for (const [i, item] of items.entries()) {
      const line = item as { quantity?: string; price_data?: { currency?: string; unit_amount?: string; product_data?: { name?: string } } };
      const price = line.price_data;
      if (!price?.product_data?.name) return refuse("Missing required param: line_items[0][price_data][product_data][name].", `line_items[${i}][price_data][product_data][name]`);
      if (price.currency !== "usd") return refuse("Invalid currency", `line_items[${i}][price_data][currency]`);
      if (!/^\d+$/.test(price.unit_amount ?? "")) return refuse("Invalid integer", `line_items[${i}][price_data][unit_amount]`);
      if (Number(price.unit_amount) < 50) return refuse("The Checkout Session's total amount due must add up to at least $0.50 usd", "line_items");
      total += Number(price.unit_amount) * Number(line.quantity ?? "1");
    }
    const metadata = (params.metadata ?? {}) as Record<string, string>;
    if (Object.values(metadata).some((v) => v.length > 500)) return refuse("Metadata values can have up to 500 characters", "metadata");
    const id = `cs_test_fake${String(++this.made).padStart(6, "0")}`;
    const session = {
      id,
      object: "checkout.session",
      mode: "payment",
      status: "open",
      payment_status: "unpaid",
      url: `${this.url}/c/pay/${id}`,
      currency: "usd",
      amount_total: total,
      client_reference_id: params.client_reference_id ?? null,
      metadata,
      success_url: params.success_url ?? null,
      customer_details: null,
    };
    this.sessions.set(id, session);
    return { status: 200, body: session };
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/** Stripe's form encoding (`a[b][0][c]=x`) back into objects and arrays. */
function formFields(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, "").split("[");
    let at: Record<string, unknown> | unknown[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const container = at as Record<string, unknown>;
      if (last) {
        container[part] = value;
        return;
      }
      container[part] ??= /^\d+$/.test(path[i + 1] ?? "") ? [] : {};
      at = container[part] as Record<string, unknown>;
    });
  }
  return root;
}
