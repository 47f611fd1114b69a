/**
 * The one table of the gateway's request-rate limits and their numbers. Every limit is counted in
 * fixed windows (rate-limiter-flexible); a request must fit in every window of its limit.
 * docs/adr (ADR 0064 to 0066) gives the reasons for the numbers the product does not set.
 */

/** One window of a limit: at most `points` requests per `seconds`. */
export interface RateWindow {
  points: number;
  seconds: number;
}

export const MINUTE = 60;
export const DAY = 86_400;

export const perMinute = (points: number): RateWindow => ({ points, seconds: MINUTE });
export const perDay = (points: number): RateWindow => ({ points, seconds: DAY });

/**
 * Limits counted per client address (public routes). `catalog` is mounted on the catalog routes;
 * the others are for public routes, mounted with `publicRateLimit(name)` where each route exists.
 */
export const ADDRESS_LIMIT_NAMES = [
  "catalog",
  "auth_exchange",
  "invitation_lookup",
  "pkce",
  "wallet_challenge",
  "csp_report",
  "uptime",
  "region",
  "openapi",
  "credit_fees",
  "payment_events",
] as const;
export type AddressLimitName = (typeof ADDRESS_LIMIT_NAMES)[number];

/** Limits counted per credential: a management key's hash or a dashboard session's token hash. */
export const CREDENTIAL_LIMIT_NAMES = ["management", "activity_export", "route_preview", "count_tokens"] as const;
export type CredentialLimitName = (typeof CREDENTIAL_LIMIT_NAMES)[number];

export type LimitName = AddressLimitName | CredentialLimitName;
export const LIMIT_NAMES: readonly LimitName[] = [...ADDRESS_LIMIT_NAMES, ...CREDENTIAL_LIMIT_NAMES];

/** The windows of every limit. */
export type RateLimitTable = Record<LimitName, readonly RateWindow[]>;

export const RATE_LIMITS: RateLimitTable = {
  // Spec.
  catalog: [perMinute(120), perDay(20_000)],
  management: [perMinute(300), perDay(20_000)],
  // Spec; on top of `management` for GET /v1/activity/export (each export streams a whole range).
  activity_export: [perMinute(6)],
  // Chosen here ("its own bucket", numbers open): per inference key, a Plan and a check per call, no hold.
  route_preview: [perMinute(120), perDay(20_000)],
  // Chosen here: per inference key, a Plan and at most one provider count per call, nothing billed.
  // Claude Code's /context asks about twenty at once.
  count_tokens: [perMinute(300), perDay(50_000)],
  // Not a product rule: chosen here (docs/adr, ADR 0064). Each exchange or challenge writes a row, so
  // those are the tightest; reads of public metadata are looser.
  auth_exchange: [perMinute(20), perDay(1_000)],
  invitation_lookup: [perMinute(30), perDay(1_000)],
  pkce: [perMinute(30), perDay(2_000)],
  wallet_challenge: [perMinute(10), perDay(500)],
  csp_report: [perMinute(60), perDay(5_000)],
  uptime: [perMinute(60), perDay(20_000)],
  region: [perMinute(60), perDay(20_000)],
  // The description is a static document of ~100 kB: a client fetches it once, not per request.
  openapi: [perMinute(30), perDay(2_000)],
  // The fee schedule is a small read that changes only with the product's policy.
  credit_fees: [perMinute(60), perDay(20_000)],
  // The payment processor posts from a few addresses and retries what is refused, for days: a
  // generous limit that only a flood from one address reaches.
  payment_events: [perMinute(300), perDay(100_000)],
};

/** Replaces the windows of the named limits (tests, benchmarks, an operator's `GATEWAY_RATE_LIMITS`). */
export type RateLimitOverrides = Partial<Record<LimitName, readonly RateWindow[]>>;

export function limitTable(overrides: RateLimitOverrides = {}): RateLimitTable {
  const table = { ...RATE_LIMITS };
  for (const name of LIMIT_NAMES) {
    const windows = overrides[name];
    if (windows !== undefined) table[name] = windows;
  }
  for (const [name, windows] of Object.entries(table)) {
    if (windows.length === 0) throw new Error(`rate limit ${name}: needs at least one window`);
    for (const w of windows) {
      if (!Number.isInteger(w.points) || w.points < 1 || !Number.isInteger(w.seconds) || w.seconds < 1) {
        throw new Error(`rate limit ${name}: windows need whole points and seconds of at least 1`);
      }
    }
  }
  return table;
}

/** "minute", "day", "second" or "N seconds". */
export function windowName(seconds: number): string {
  if (seconds === MINUTE) return "minute";
  if (seconds === DAY) return "day";
  if (seconds === 3600) return "hour";
  if (seconds === 1) return "second";
  return `${seconds} seconds`;
}

/** The name a refusal message uses for a limit. */
const LIMIT_LABELS: Record<LimitName, string> = {
  catalog: "catalog",
  management: "management",
  activity_export: "CSV export",
  route_preview: "route preview",
  count_tokens: "token count",
  auth_exchange: "key exchange",
  invitation_lookup: "invitation lookup",
  pkce: "PKCE describe and exchange",
  wallet_challenge: "wallet challenge",
  csp_report: "CSP report",
  uptime: "uptime",
  region: "region",
  openapi: "API description",
  credit_fees: "fee schedule",
  payment_events: "payment-processor events",
};

/** "management rate limit: 300 requests per minute per key". */
export function describeLimit(name: LimitName, window: RateWindow, per: string): string {
  const requests = window.points === 1 ? "1 request" : `${window.points} requests`;
  return `${LIMIT_LABELS[name]} rate limit: ${requests} per ${windowName(window.seconds)} per ${per}`;
}
