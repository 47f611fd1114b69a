import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock, Nanodollars } from "@router/money";
import type { LedgerPort } from "./ledger-port";

/**
 * An organisation's lifetime purchase is read again after this long (the 10-second rule): a top-up
 * through the processor raises its request-rate tier on every gateway within it, and at once on the
 * gateway whose Admit answered the new figure.
 */
export const PURCHASE_TTL_MS = 10_000;
/**
 * The fee is the deployment's setting, read in the background every 10 s while requests come; an
 * answer is served up to this long, so no request waits for it after the first.
 */
const FEE_MAX_AGE_MS = 10 * 60_000;
const FEE_REFRESH_MS = 10_000;
const DEPLOYMENT = "";

/**
 * What the ledger says of credits, cached: whether a fee is charged on requests (then every request
 * asks Admit, which holds the fee against the balance), and each organisation's lifetime credit
 * purchase (request-rate tiers follow it). With no fee (the default) a request costs nothing more
 * than before: the fee answer is in memory and refreshed off the request path.
 */
export class CreditStanding {
  private readonly fee: LoadingCache<number>;
  private readonly purchases: LoadingCache<Nanodollars | null>;

  constructor(ledger: Pick<LedgerPort, "creditTerms">, clock: Clock, private readonly log: Logger) {
    this.fee = new LoadingCache<number>(
      async (_key, previous) => {
        try {
          return (await ledger.creditTerms({ orgId: "" })).feeBps;
        } catch (err) {
          // Never known: no fee, as by default (the ledger still charges a fee at each request's
          // record); known before: that answer stands until the ledger answers again.
          this.log.warn({ err }, "gateway.credit_terms.unavailable");
          return previous ?? 0;
        }
      },
      clock,
      { ttlMs: FEE_MAX_AGE_MS, refreshAfterMs: FEE_REFRESH_MS, maxEntries: 1 },
    );
    this.purchases = new LoadingCache<Nanodollars | null>(
      async (orgId, previous) => {
        try {
          return (await ledger.creditTerms({ orgId })).purchasedNanodollars;
        } catch (err) {
          this.log.warn({ err, orgId }, "gateway.credit_terms.unavailable");
          return previous ?? null;
        }
      },
      clock,
      { ttlMs: PURCHASE_TTL_MS },
    );
  }

  /** Router's fee on each request in basis points of its list cost; above 0, each request asks Admit. */
  feeBps(): Promise<number> {
    return this.fee.get(DEPLOYMENT);
  }

  /** The organisation's lifetime credit purchase; null when the ledger could not say (no tier applies then). */
  purchased(orgId: string): Promise<Nanodollars | null> {
    return this.purchases.get(orgId);
  }

  /** The purchase an Admit answered: fresher than the cache. */
  noteAdmission(orgId: string, purchased: Nanodollars): void {
    this.purchases.set(orgId, purchased);
  }
}
