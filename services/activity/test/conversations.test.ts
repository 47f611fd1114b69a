import { ManualClock } from "@router/money";
import { recordRequests } from "../src/recording/request-record";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, identityHeader } from "./request-events";

const NOW = new Date("2026-11-21T10:00:00.000Z");
const clock = new ManualClock(NOW);
let activity: ActivityHarness;
const org = "org_conv";

const minutesAgo = (n: number): bigint => BigInt(NOW.getTime() - n * 60_000);
const iso = (n: number): string => new Date(NOW.getTime() - n * 60_000).toISOString();

async function get(path: string, orgId = org, credential: "management" | "session" | "inference" = "management") {
  const res = await fetch(`${activity.base}${path}`, { headers: await identityHeader(orgId, credential) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  activity = await startActivityHarness("activityconv", clock);
  const claude = { servedModel: "anthropic/claude-sonnet-4", providerSlug: "anthropic" };
  await recordRequests(
    activity.db,
    [
      // s-a: started three days ago, switched model today, one error.
      completedEvent({ orgId: org, sessionId: "s-a", createdAtMs: minutesAgo(3 * 24 * 60), listCostNanodollars: 5_000_000n }),
      completedEvent({ orgId: org, sessionId: "s-a", createdAtMs: minutesAgo(30), listCostNanodollars: 1_000_000n }),
      completedEvent({ orgId: org, sessionId: "s-a", createdAtMs: minutesAgo(20), ...claude, status: "error", errorCode: "upstream_error", listCostNanodollars: 0n }),
      // s-b: the most recently active.
      completedEvent({ orgId: org, sessionId: "s-b", createdAtMs: minutesAgo(5), listCostNanodollars: 250_000n }),
      // s-old: nothing in the last day.
      completedEvent({ orgId: org, sessionId: "s-old", createdAtMs: minutesAgo(5 * 24 * 60) }),
      // No session: not a conversation.
      completedEvent({ orgId: org, sessionId: "", createdAtMs: minutesAgo(1) }),
      // Another organisation using the same session id.
      completedEvent({ orgId: "org_conv_other", sessionId: "s-a", createdAtMs: minutesAgo(1), listCostNanodollars: 9_000_000n }),
    ],
    clock.now(),
  );
});

afterAll(async () => {
  await activity.close();
});

describe("GET /v1/activity/conversations", () => {
  test("groups generations by session, most recently active first, leaving out requests without one", async () => {
    const res = await get("/v1/activity/conversations");

    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { session_id: string }) => c.session_id)).toEqual(["s-b", "s-a", "s-old"]);
    expect(res.body.data[1]).toEqual({
      session_id: "s-a",
      generations: 3,
      errors: 1,
      started_at: iso(3 * 24 * 60),
      last_seen_at: iso(20),
      spend: 0.006,
      tokens: 45,
      models: ["anthropic/claude-sonnet-4", "openai/gpt-4o-mini"],
      providers: ["anthropic", "openai"],
    });
    expect(res.body.next_cursor).toBeNull();
  });

  test("counts only the window's generations, and leaves out sessions with none in it", async () => {
    const res = await get("/v1/activity/conversations?days=1");

    expect(res.body.data.map((c: { session_id: string }) => c.session_id)).toEqual(["s-b", "s-a"]);
    expect(res.body.data[1]).toMatchObject({
      generations: 2,
      errors: 1,
      started_at: iso(3 * 24 * 60),
      spend: 0.001,
      tokens: 30,
      models: ["anthropic/claude-sonnet-4", "openai/gpt-4o-mini"],
    });
  });

  test("pages with next_cursor", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await get(`/v1/activity/conversations?limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...res.body.data.map((c: { session_id: string }) => c.session_id));
      cursor = res.body.next_cursor as string | null;
      if (cursor === null) break;
    }

    expect(seen).toEqual(["s-b", "s-a", "s-old"]);
  });

  test("shows another organisation none of these sessions, even under the same session id", async () => {
    const res = await get("/v1/activity/conversations", "org_conv_other");

    expect(res.body.data).toEqual([expect.objectContaining({ session_id: "s-a", generations: 1, spend: 0.009 })]);
  });

  test.each([
    ["limit=0", "limit"],
    ["days=-2", "days"],
    ["cursor=not-ours", "cursor"],
  ])("answers %s with 400 naming %s", async (query, field) => {
    const res = await get(`/v1/activity/conversations?${query}`);

    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  test("refuses an inference key with 403", async () => {
    expect((await get("/v1/activity/conversations", org, "inference")).status).toBe(403);
  });
});
