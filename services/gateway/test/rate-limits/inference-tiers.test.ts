import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { DomainError } from "@router/errors";
import { loadConfig } from "@router/config";
import { TEST_REDIS_URL } from "@router/testkit";
import { gatewayConfigSchema, rateLimitOptionsOf } from "../../src/config";
import { InferenceRateTiers, type RateTier } from "../../src/rate-limits/inference-tiers";
import { RateLimitStore } from "../../src/rate-limits/rate-limiter";
import { silentLog } from "../harness";

const USD = 1_000_000_000n;
/** Two a minute for every organisation; five a minute from 10 USD of lifetime purchase. */
const TIERS: RateTier[] = [
  { purchased: 0n, windows: [{ points: 2, seconds: 60 }] },
  { purchased: 10n * USD, windows: [{ points: 5, seconds: 60 }] },
];

const response = () => new ServerResponse(new IncomingMessage(new Socket()));

/** Counts `n` requests of `org`; answers how many were let through and the last refusal. */
async function count(tiers: InferenceRateTiers, org: string, n: number) {
  let allowed = 0;
  let refusal: { err: DomainError; res: ServerResponse } | undefined;
  for (let i = 0; i < n; i++) {
    const res = response();
    try {
      await tiers.admit(org, res);
      allowed++;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      refusal = { err, res };
    }
  }
  return { allowed, refusal };
}

describe("inference request-rate tiers by lifetime credit purchase", () => {
  const purchases = new Map<string, bigint | null>();
  const credits = { purchased: async (org: string) => (purchases.has(org) ? purchases.get(org)! : 0n) };
  const org = () => `org_${randomBytes(6).toString("hex")}`;

  it("refuses past the tier's ceiling with 429, Retry-After and the envelope's details; a top-up raises the ceiling", async () => {
    const tiers = new InferenceRateTiers({ store: new RateLimitStore({ keyPrefix: "t", log: silentLog }), tiers: TIERS, credits });
    const o = org();

    const first = await count(tiers, o, 3);
    expect(first.allowed).toBe(2);
    expect(first.refusal?.err).toMatchObject({ code: "rate_limited", status: 429 });
    expect(first.refusal?.err.details).toMatchObject({ limit: "inference", window: "minute", max_requests: 2, tier_purchased: 0 });
    expect(first.refusal?.err.message).toMatch(/buying credits raises it/);
    expect(Number(first.refusal?.res.getHeader("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(first.refusal?.res.getHeader("retry-after"))).toBeLessThanOrEqual(60);
    expect(first.refusal?.res.getHeader("x-ratelimit-remaining")).toBe("0");

    purchases.set(o, 10n * USD);
    expect((await count(tiers, o, 1)).allowed).toBe(1);
  });

  it("does not lower the ceiling when the balance is spent: it follows the lifetime purchase alone", async () => {
    const tiers = new InferenceRateTiers({ store: new RateLimitStore({ keyPrefix: "t", log: silentLog }), tiers: TIERS, credits });
    const o = org();
    purchases.set(o, 25n * USD);

    expect((await count(tiers, o, 6)).allowed).toBe(5);
  });

  it("lets an organisation through when the ledger cannot say what it bought", async () => {
    const tiers = new InferenceRateTiers({ store: new RateLimitStore({ keyPrefix: "t", log: silentLog }), tiers: TIERS, credits });
    const o = org();
    purchases.set(o, null);
    expect((await count(tiers, o, 4)).allowed).toBe(4);
  });

  it("counts across gateway instances sharing Redis, and an organisation moving up keeps its count", async () => {
    const prefix = `tiers_${randomBytes(4).toString("hex")}`;
    const redis = [new Redis(TEST_REDIS_URL), new Redis(TEST_REDIS_URL)];
    try {
      const stores = redis.map((r) => new RateLimitStore({ redis: r, keyPrefix: prefix, log: silentLog }));
      await Promise.all(stores.map((s) => s.ready(5_000)));
      expect(stores.every((s) => s.shared)).toBe(true);
      const [a, b] = stores.map((store) => new InferenceRateTiers({ store, tiers: TIERS, credits }));
      const o = org();

      expect((await count(a!, o, 1)).allowed).toBe(1);
      expect((await count(b!, o, 2)).allowed).toBe(1);

      purchases.set(o, 10n * USD);
      // Three counted already (a refused request counts too): two more of the five.
      expect((await count(a!, o, 4)).allowed).toBe(2);
    } finally {
      redis.forEach((r) => r.disconnect());
    }
  });
});

describe("ROUTER_RATE_TIERS", () => {
  const load = (value: string) => rateLimitOptionsOf(loadConfig(gatewayConfigSchema, { ROUTER_RATE_TIERS: value })).rateTiers;

  it("reads tiers lowest first, purchases in USD", () => {
    expect(load('[{"purchased": 0, "per_minute": 20}, {"purchased": 10.5, "per_minute": 200}]')).toEqual([
      { purchased: 0n, windows: [{ points: 20, seconds: 60 }] },
      { purchased: 10_500_000_000n, windows: [{ points: 200, seconds: 60 }] },
    ]);
    expect(rateLimitOptionsOf(loadConfig(gatewayConfigSchema, {})).rateTiers).toEqual([]);
  });

  it.each([
    ["not json", "JSON array"],
    ["[]", "at least one tier"],
    ['[{"purchased": 5, "per_minute": 20}]', "first tier is for 0"],
    ['[{"purchased": 0, "per_minute": 20}, {"purchased": 0, "per_minute": 30}]', "lowest purchase up"],
    ['[{"purchased": 0, "per_minute": 20}, {"purchased": 10, "per_minute": 10}]', "at least as many"],
    ['[{"purchased": 0, "per_minute": 20}, {"purchased": 10, "per_day": 100}]', "windows of the first"],
    ['[{"purchased": 0}]', "at least one of"],
    ['[{"purchased": 0, "per_minute": 20, "burst": 3}]', "burst"],
  ])("refuses %s, naming ROUTER_RATE_TIERS and what is wrong", (value, what) => {
    expect(() => load(value)).toThrow(/ROUTER_RATE_TIERS/);
    expect(() => load(value)).toThrow(new RegExp(what));
  });
});
