import { ManualClock } from "@router/money";
import { recordRequests } from "../src/recording/request-record";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, identityHeader } from "./request-events";

const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
let activity: ActivityHarness;
const ours = completedEvent({ orgId: "org_content" });
const theirs = completedEvent({ orgId: "org_content_other" });

async function get(path: string, orgId: string, credential: "management" | "session" | "inference" = "management") {
  const res = await fetch(`${activity.base}${path}`, { headers: await identityHeader(orgId, credential) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  activity = await startActivityHarness("activitycontent", clock);
  await recordRequests(activity.db, [ours, theirs], clock.now());
});

afterAll(async () => {
  await activity.close();
});

describe("GET /v1/generation/{id}/content", () => {
  test.each(["management", "session"] as const)(
    "answers a %s caller 404 for its own generation, saying logging was off when it was made",
    async (credential) => {
      const res = await get(`/v1/generation/${ours.requestId}/content`, "org_content", credential);

      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: "not_found", details: { reason: "not_logged" } });
      expect(res.body.error.message).toMatch(/logging was off/);
      expect(res.body).not.toHaveProperty("data");
    },
  );

  test("answers another organisation's generation with a plain 404 that says nothing about it", async () => {
    const res = await get(`/v1/generation/${theirs.requestId}/content`, "org_content");

    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe("generation not found");
    expect(res.body.error.details).toBeUndefined();
  });

  test("answers an unknown generation with 404", async () => {
    expect((await get("/v1/generation/gen-unknown/content", "org_content")).status).toBe(404);
  });

  test("refuses an inference key with 403, even for its own organisation's generation", async () => {
    const res = await get(`/v1/generation/${ours.requestId}/content`, "org_content", "inference");

    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });
});
