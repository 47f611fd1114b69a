import type Stripe from "stripe";
import { DomainError, invalid } from "@router/errors";
import type { Nanodollars } from "@router/money";

/** Stripe amounts are integer cents: one cent is 10^7 nanodollars. */
export const NANOS_PER_CENT = 10_000_000n;

/** An invoice or a receipt of a purchase, as the processor keeps it. */
export interface PurchaseDocument {
  kind: "invoice" | "receipt";
  url: string;
  pdfUrl: string | null;
  number: string | null;
}

/** An event the processor sent, once its signature checked out. */
export interface ProcessorEvent {
  id: string;
  type: string;
  /** The event's object (a checkout session for the events that credit). */
  object: unknown;
}

export interface StripeSettings {
  /** The API secret key (`sk_...`): needed to read invoices and receipts. Unset: not configured. */
  secretKey?: string;
  /** The webhook endpoint's signing secret (`whsec_...`): needed to accept events. */
  webhookSecret?: string;
  /** Another API address (a self-hosted mock in tests); default Stripe's own. */
  apiUrl?: string;
}

/**
 * The Stripe SDK is large (about 3 MB of heap, 200 modules) and a BYOK-only deployment never takes
 * a payment: it is loaded when a processor is configured or its first event arrives.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const stripeSdk = (): typeof Stripe => require("stripe") as typeof Stripe;

/** How long after its signing time an event is still accepted (Stripe's default; replays past it are refused). */
const SIGNATURE_TOLERANCE_S = 300;

/**
 * The payment processor, Stripe, through its own SDK: event signatures are checked with
 * `webhooks.constructEvent` (the `Stripe-Signature` scheme), documents read from its API.
 */
export class StripeProcessor {
  readonly provider = "stripe";
  /** The header the processor signs its events in. */
  static readonly SIGNATURE_HEADER = "stripe-signature";
  private readonly api: Stripe | undefined;

  constructor(private readonly settings: StripeSettings) {
    const StripeApi = settings.secretKey ? stripeSdk() : undefined;
    this.api = StripeApi && settings.secretKey ? new StripeApi(settings.secretKey, { ...apiAddress(settings.apiUrl), maxNetworkRetries: 1, timeout: 10_000 }) : undefined;
  }

  /** Whether a processor is configured: purchases' documents can be read. */
  get configured(): boolean {
    return this.api !== undefined;
  }

  /**
   * The event in `payload` if its signature is the processor's and recent (judged at `nowMs`); a
   * missing or bad signature is a 400 naming the header, a signed body that is not JSON a 400
   * naming `body`. Without a webhook secret no signature can be valid: a 400 naming the header too
   * (the caller's fault whatever the configuration, never a 5xx: a caller must not be able to tell
   * an unconfigured deployment from a configured one, nor make its errors page an operator).
   */
  verifyEvent(payload: Buffer, signature: string | undefined, nowMs: number): ProcessorEvent {
    if (!signature) throw invalid(StripeProcessor.SIGNATURE_HEADER, "missing");
    const secret = this.settings.webhookSecret;
    if (!secret) throw invalid(StripeProcessor.SIGNATURE_HEADER, "the signature does not match the body, or it is too old");
    const sdk = stripeSdk();
    let event: Stripe.Event;
    try {
      event = sdk.webhooks.constructEvent(payload, signature, secret, SIGNATURE_TOLERANCE_S, undefined, nowMs);
    } catch (err) {
      if (err instanceof sdk.errors.StripeSignatureVerificationError) {
        throw invalid(StripeProcessor.SIGNATURE_HEADER, "the signature does not match the body, or it is too old");
      }
      throw invalid("body", "expected a JSON event");
    }
    return { id: String(event.id), type: String(event.type), object: (event.data as { object?: unknown } | undefined)?.object };
  }

  /**
   * Makes a hosted checkout session for a purchase of `gross` (whole cents) by `orgId`: the session
   * names the organisation (`client_reference_id`) and the fee quoted (`metadata.fee_nanodollars`),
   * which its crediting event is read back with. A processor that fails or cannot be reached is a 502.
   */
  async startCheckout(p: { orgId: string; gross: Nanodollars; fee: Nanodollars; returnUrl?: string }): Promise<{ id: string; url: string }> {
    if (!this.api) throw new DomainError("unavailable", "no payment processor is configured");
    let session: Stripe.Checkout.Session;
    try {
      session = await this.api.checkout.sessions.create({
        mode: "payment",
        client_reference_id: p.orgId,
        line_items: [
          { quantity: 1, price_data: { currency: "usd", unit_amount: Number(p.gross / NANOS_PER_CENT), product_data: { name: "Router credits" } } },
        ],
        metadata: { fee_nanodollars: p.fee.toString() },
        // The tax jurisdiction of the purchase comes from the address.
        billing_address_collection: "required",
        ...(p.returnUrl ? { success_url: p.returnUrl } : {}),
      });
    } catch (err) {
      throw new DomainError("upstream_error", "the payment processor did not make a checkout session", { cause: err });
    }
    if (!session.url) throw new DomainError("upstream_error", "the payment processor's checkout session has no address to pay at");
    return { id: session.id, url: session.url };
  }

  /**
   * The invoice of a checkout session, or else the receipt of its payment; null when it has neither.
   * A processor that fails or cannot be reached is a 502.
   */
  async document(sessionId: string): Promise<PurchaseDocument | null> {
    if (!this.api) throw new DomainError("unavailable", "no payment processor is configured");
    let session: Stripe.Checkout.Session;
    try {
      session = await this.api.checkout.sessions.retrieve(sessionId, { expand: ["invoice", "payment_intent.latest_charge"] });
    } catch (err) {
      throw new DomainError("upstream_error", "the payment processor did not answer with the purchase's session", { cause: err });
    }
    const invoice = typeof session.invoice === "object" ? session.invoice : null;
    if (invoice?.hosted_invoice_url) {
      return { kind: "invoice", url: invoice.hosted_invoice_url, pdfUrl: invoice.invoice_pdf ?? null, number: invoice.number ?? null };
    }
    const intent = typeof session.payment_intent === "object" ? session.payment_intent : null;
    const charge = intent && typeof intent.latest_charge === "object" ? intent.latest_charge : null;
    if (charge?.receipt_url) {
      return { kind: "receipt", url: charge.receipt_url, pdfUrl: null, number: charge.receipt_number ?? null };
    }
    return null;
  }
}

/** The SDK's host, port and protocol for an API URL such as `http://127.0.0.1:12111`. */
function apiAddress(url: string | undefined): { host?: string; port?: number; protocol?: "http" | "https" } {
  if (!url) return {};
  const u = new URL(url);
  const protocol = u.protocol === "http:" ? "http" : "https";
  return { host: u.hostname, port: u.port ? Number(u.port) : protocol === "http" ? 80 : 443, protocol };
}
