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

const org = "org_breakdown";

beforeAll(async () => {
  activity = await startActivityHarness("activitybrk", clock);
  const keyA = "a".repeat(64);
  const keyB = "b".repeat(64);
  await seed(
    // In the 3-day window (2026-11-19 .. today).
    completedEvent({ orgId: org, keyHash: keyA, keyName: "web", servedModel: "openai/gpt-4o", providerSlug: "openai", appId: "app_web", appTitle: "Web", agent: "planner", createdAtMs: at("2026-11-21T09:00:00Z"), listCostNanodollars: 3_000n, usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 0, reasoningTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 } }),
    completedEvent({ orgId: org, keyHash: keyA, keyName: "web", servedModel: "openai/gpt-4o", providerSlug: "openai", appId: "app_web", appTitle: "Web", agent: "planner", createdAtMs: at("2026-11-20T09:00:00Z"), listCostNanodollars: 1_000n }),
    completedEvent({ orgId: org, keyHash: keyB, keyName: "batch", servedModel: "anthropic/claude-haiku", providerSlug: "anthropic", appId: "", appTitle: "", agent: "", createdAtMs: at("2026-11-19T00:00:00Z"), listCostNanodollars: 500n, workspaceId: "ws_other" }),
    refusedEvent({ orgId: org, keyHash: keyB, keyName: "batch", requestedModel: "nobody/nothing", createdAtMs: at("2026-11-21T08:00:00Z") }),
    // Before the window.
    completedEvent({ orgId: org, keyHash: keyB, keyName: "batch", createdAtMs: at("2026-11-18T23:59:59Z"), listCostNanodollars: 9_000_000n }),
    // Another organisation.
    completedEvent({ orgId: "org_breakdown_other", createdAtMs: at("2026-11-21T09:00:00Z"), listCostNanodollars: 7_000_000n }),
  );
});

afterAll(async () => {
  await activity.close();
});

describe("GET /v1/activity/breakdown", () => {
  test("splits the period's requests by model, most spend first, at list price", async () => {
    const res = await get("/v1/activity/breakdown?by=model&days=3", org);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ by: "model", days: 3, others: null });
    expect(res.body.data.groups.map((g: { value: string; requests: number; spend: number; errors: number }) => [g.value, g.requests, g.spend, g.errors])).toEqual([
      ["openai/gpt-4o", 2, 0.000004, 0],
      ["anthropic/claude-haiku", 1, 0.0000005, 0],
      ["nobody/nothing", 1, 0, 1],
    ]);
    expect(res.body.data.groups[0]).toMatchObject({ spend_nanodollars: "4000", tokens: 30 });
  });

  test("by key labels each key with its name; by app and agent keep requests without one as value null", async () => {
    const keys = await get("/v1/activity/breakdown?by=key&days=3", org);
    expect(keys.body.data.groups.map((g: { value: string; label: string; requests: number }) => [g.label, g.requests])).toEqual([
      ["web", 2],
      ["batch", 2],
    ]);
    const apps = await get("/v1/activity/breakdown?by=app&days=3", org);
    expect(apps.body.data.groups.map((g: { value: string | null; label: string | null }) => [g.value, g.label])).toEqual([
      ["app_web", "Web"],
      [null, null],
      // The refusal came from the default app of the events.
      ["app_console", "Console"],
    ]);
    const agents = await get("/v1/activity/breakdown?by=agent&days=3", org);
    // The refusal is the events' default agent, planner, too.
    expect(agents.body.data.groups[0]).toMatchObject({ value: "planner", requests: 3 });
    const providers = await get("/v1/activity/breakdown?by=provider&days=3", org);
    expect(providers.body.data.groups[0]).toMatchObject({ value: "openai", requests: 2 });
  });

  test("sums the groups past the limit into others, and narrows to a workspace", async () => {
    const limited = await get("/v1/activity/breakdown?by=model&days=3&limit=1", org);
    expect(limited.body.data.groups).toHaveLength(1);
    expect(limited.body.data.others).toMatchObject({ value: null, requests: 2, spend_nanodollars: "500", errors: 1 });
    const one = await get("/v1/activity/breakdown?by=model&days=3&workspace=ws_other", org);
    expect(one.body.data.groups.map((g: { value: string }) => g.value)).toEqual(["anthropic/claude-haiku"]);
  });

  test("the window follows days, and another organisation's requests never count", async () => {
    const wide = await get("/v1/activity/breakdown?by=key&days=4", org);
    expect(wide.body.data.groups[0]).toMatchObject({ label: "batch", requests: 3 });
    const other = await get("/v1/activity/breakdown?by=model&days=3", "org_breakdown_other");
    expect(other.body.data.groups).toHaveLength(1);
  });

  test("daily=true gives each group every day of the period, oldest first, summing to the group", async () => {
    const res = await get("/v1/activity/breakdown?by=key&days=3&daily=true", org);
    const web = res.body.data.groups.find((g: { label: string }) => g.label === "web");
    expect(web.daily).toEqual([
      { date: "2026-11-19", requests: 0, spend: 0 },
      { date: "2026-11-20", requests: 1, spend: 0.000001 },
      { date: "2026-11-21", requests: 1, spend: 0.000003 },
    ]);
    const limited = await get("/v1/activity/breakdown?by=key&days=3&daily=true&limit=1", org);
    expect(limited.body.data.others.daily.map((d: { requests: number }) => d.requests)).toEqual([1, 0, 1]);
    const plain = await get("/v1/activity/breakdown?by=key&days=3", org);
    expect(plain.body.data.groups[0].daily).toBeUndefined();
  });

  test.each([
    ["daily is not a boolean", "/v1/activity/breakdown?by=model&daily=yes", "daily"],
    ["by is missing", "/v1/activity/breakdown", "by"],
    ["by is not a dimension", "/v1/activity/breakdown?by=colour", "by"],
    ["limit is too big", "/v1/activity/breakdown?by=model&limit=101", "limit"],
    ["days is not a number", "/v1/activity/breakdown?by=model&days=x", "days"],
    ["include is not key", "/v1/activity?include=everything", "include"],
  ])("refuses bad input naming the field: %s", async (_what, path, field) => {
    const res = await get(path, org);
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  test("refuses an inference key (usage:read is for management keys and sessions)", async () => {
    const res = await get("/v1/activity/breakdown?by=model", org, "inference");
    expect(res.status).toBe(403);
  });
});

describe("GET /v1/activity: each row's key, and the key filter", () => {
  test("names each row's key and narrows to one key's requests", async () => {
    const plain = await get("/v1/activity?days=3", org);
    expect(plain.body.data[0].key).toBeUndefined();
    const all = await get("/v1/activity?days=3&include=key", org);
    expect(all.status).toBe(200);
    expect(all.body.data[0].key).toEqual({ hash: "a".repeat(64), name: "web" });
    const batch = await get(`/v1/activity?days=3&include=key&key=${"b".repeat(64)}`, org);
    // The list's `days` is a window ending now (72 hours), so the request of 2026-11-18 late is in it.
    expect(batch.body.data.map((r: { key: { name: string } }) => r.key.name)).toEqual(["batch", "batch", "batch"]);
  });
});
