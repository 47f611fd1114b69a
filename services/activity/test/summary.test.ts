import { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { recordRequests } from "../src/recording/request-record";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, identityHeader, refusedEvent } from "./request-events";

const NOW = new Date("2026-11-21T10:00:00.000Z");
const clock = new ManualClock(NOW);
let activity: ActivityHarness;

const at = (iso: string): bigint => BigInt(Date.parse(iso));

async function seed(...list: events.RequestCompleted[]): Promise<void> {
  await recordRequests(activity.db, list, clock.now());
}

async function get(path: string, orgId: string, credential: "management" | "session" | "inference" = "management") {
  const res = await fetch(`${activity.base}${path}`, { headers: await identityHeader(orgId, credential) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const EMPTY_TOTALS = {
  requests: 0,
  errors: 0,
  byok_requests: 0,
  spend: 0,
  fees: 0,
  tokens: 0,
  prompt_tokens: 0,
  cached_tokens: 0,
  cache_hit_rate: null,
  blended_per_million: null,
};

beforeAll(async () => {
  activity = await startActivityHarness("activitysum", clock);
});

afterAll(async () => {
  await activity.close();
});

describe("GET /v1/activity/summary", () => {
  const org = "org_summary";
  const usage = (prompt: number, completion: number, cached: number) => ({ promptTokens: prompt, completionTokens: completion, cachedTokens: cached, reasoningTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 });

  beforeAll(async () => {
    await seed(
      // Current period with days=3: 2026-11-19 .. 2026-11-21 (today, so far).
      completedEvent({ orgId: org, createdAtMs: at("2026-11-21T09:59:00Z"), listCostNanodollars: 1_000_000n, billedCostNanodollars: 0n, usage: usage(100, 100, 40) }),
      completedEvent({ orgId: org, createdAtMs: at("2026-11-19T00:00:00Z"), listCostNanodollars: 500_000n, billedCostNanodollars: 25_000n, isByok: false, usage: usage(50, 0, 0) }),
      refusedEvent({ orgId: org, createdAtMs: at("2026-11-19T12:00:00Z") }),
      completedEvent({ orgId: org, workspaceId: "ws_second", createdAtMs: at("2026-11-21T01:00:00Z"), listCostNanodollars: 2_000_000n, usage: usage(10, 10, 10) }),
      // Prior period: 2026-11-16 .. 2026-11-18.
      completedEvent({ orgId: org, createdAtMs: at("2026-11-18T23:59:59.999Z"), listCostNanodollars: 3_000_000n, usage: usage(300, 0, 0) }),
      completedEvent({ orgId: org, createdAtMs: at("2026-11-16T00:00:00Z"), status: "error", errorCode: "upstream_error", listCostNanodollars: 0n, usage: usage(0, 0, 0) }),
      // Before both periods.
      completedEvent({ orgId: org, createdAtMs: at("2026-11-15T23:59:59Z"), listCostNanodollars: 9_000_000n }),
      // Another organisation, inside the window.
      completedEvent({ orgId: "org_summary_other", createdAtMs: at("2026-11-21T09:00:00Z"), listCostNanodollars: 7_000_000n }),
    );
  });

  test("returns the current period and the prior period of equal length side by side, with a daily series", async () => {
    const res = await get("/v1/activity/summary?days=3", org);

    expect(res.status).toBe(200);
    expect(res.body.data.current).toEqual({
      requests: 4,
      errors: 1,
      byok_requests: 3,
      spend: 0.0035,
      // Router's fee, apart from the list-price spend: the one request billed anything.
      fees: 0.000025,
      tokens: 270,
      prompt_tokens: 160,
      cached_tokens: 50,
      cache_hit_rate: 50 / 160,
      // 3,500,000 nanodollars over 270 tokens: 12,962,962,963 nanodollars per million tokens.
      blended_per_million: 12.962962963,
    });
    expect(res.body.data.prior).toEqual({
      requests: 2,
      errors: 1,
      byok_requests: 2,
      spend: 0.003,
      fees: 0,
      tokens: 300,
      prompt_tokens: 300,
      cached_tokens: 0,
      cache_hit_rate: 0,
      blended_per_million: 10,
    });
    expect(res.body.data.daily.map((d: { date: string; requests: number }) => [d.date, d.requests])).toEqual([
      ["2026-11-19", 2],
      ["2026-11-20", 0],
      ["2026-11-21", 2],
    ]);
  });

  test("gives null, never 0, for a ratio without a denominator", async () => {
    const res = await get("/v1/activity/summary?days=3", org);

    expect(res.body.data.daily[1]).toEqual({ date: "2026-11-20", ...EMPTY_TOTALS });
    // 2026-11-19: the refusal has no tokens, the other request has prompt tokens but no cached ones.
    expect(res.body.data.daily[0]).toMatchObject({ requests: 2, errors: 1, prompt_tokens: 50, cache_hit_rate: 0, blended_per_million: 10 });
  });

  test("answers an organisation with no requests with zero counts and null ratios", async () => {
    const res = await get("/v1/activity/summary?days=2", "org_summary_empty");

    expect(res.body.data).toEqual({
      current: EMPTY_TOTALS,
      prior: EMPTY_TOTALS,
      daily: [
        { date: "2026-11-20", ...EMPTY_TOTALS },
        { date: "2026-11-21", ...EMPTY_TOTALS },
      ],
    });
  });

  test("narrows to one workspace", async () => {
    const res = await get("/v1/activity/summary?days=3&workspace=ws_second", org);

    expect(res.body.data.current).toMatchObject({ requests: 1, spend: 0.002, tokens: 20, cache_hit_rate: 1 });
    expect(res.body.data.prior).toEqual(EMPTY_TOTALS);
  });

  test("covers the last 30 days when days is not given", async () => {
    const res = await get("/v1/activity/summary", org);

    expect(res.body.data.daily).toHaveLength(30);
    expect(res.body.data.daily[0].date).toBe("2026-10-23");
    expect(res.body.data.current.requests).toBe(7);
    expect(res.body.data.current.spend).toBe(0.0155);
  });

  test("never counts another organisation's requests", async () => {
    const res = await get("/v1/activity/summary?days=1", "org_summary_other");

    expect(res.body.data.current).toMatchObject({ requests: 1, spend: 0.007 });
  });

  test.each([
    ["days=0", "days"],
    ["days=3651", "days"],
    ["days=week", "days"],
    ["workspace=ws_bad%20id", "workspace"],
    ["workspace=client1", "workspace"],
  ])("answers %s with 400 naming %s", async (query, field) => {
    const res = await get(`/v1/activity/summary?${query}`, org);

    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  test("refuses an inference key with 403", async () => {
    const res = await get("/v1/activity/summary", org, "inference");

    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });
});
