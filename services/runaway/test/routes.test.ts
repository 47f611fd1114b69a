import { ManualClock } from "@router/money";
import { startRunawayHarness, type RunawayHarness } from "./runaway-harness";

/** The settings and the flag list over HTTP: roles from the signed identity, bad input, bounds. */

const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
let h: RunawayHarness;

beforeAll(async () => {
  h = await startRunawayHarness("runawayroutes", clock);
});

afterAll(() => h.close());

describe("GET and PUT /v1/alerts/settings", () => {
  test("answers alert until the organisation chooses pause, per organisation", async () => {
    expect(await h.get("/v1/alerts/settings", "org_settings")).toEqual({ status: 200, body: { data: { runaway_action: "alert" } } });

    const put = await h.put("/v1/alerts/settings", "org_settings", { runaway_action: "pause" });

    expect(put).toEqual({ status: 200, body: { data: { runaway_action: "pause" } } });
    expect((await h.get("/v1/alerts/settings", "org_settings")).body.data.runaway_action).toBe("pause");
    expect((await h.get("/v1/alerts/settings", "org_neighbour")).body.data.runaway_action).toBe("alert");
    expect((await h.put("/v1/alerts/settings", "org_settings", { runaway_action: "alert" })).body.data.runaway_action).toBe("alert");
  });

  test.each(["owner", "admin", "member"] as const)("lets the %s role change it", async (role) => {
    expect((await h.put("/v1/alerts/settings", `org_role_${role}`, { runaway_action: "pause" }, { role })).status).toBe(200);
  });

  test.each(["billing", "readonly"] as const)("refuses the %s role a change with 403 permission_denied, and reads for it", async (role) => {
    const res = await h.put("/v1/alerts/settings", "org_roles", { runaway_action: "pause" }, { role });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ status: 403, code: "permission_denied", details: { needs: "config:write" } });
    expect(await h.get("/v1/alerts/settings", "org_roles", { role })).toEqual({ status: 200, body: { data: { runaway_action: "alert" } } });
  });

  test("refuses an inference key with 403", async () => {
    expect((await h.get("/v1/alerts/settings", "org_roles", { credential: "inference", role: "readonly" })).status).toBe(403);
    expect((await h.get("/v1/alerts/runaway", "org_roles", { credential: "inference", role: "readonly" })).status).toBe(403);
  });

  test.each([
    ["a missing action", {}, "runaway_action"],
    ["an unknown action", { runaway_action: "stop" }, "runaway_action"],
    ["a wrong type", { runaway_action: true }, "runaway_action"],
    ["an unknown field", { runaway_action: "pause", notify: true }, "notify"],
    ["a body that is not an object", [1, 2], "body"],
  ])("answers %s with 400 naming the field, changing nothing", async (_what, body, field) => {
    const res = await h.put("/v1/alerts/settings", "org_bad", body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
    expect((await h.get("/v1/alerts/settings", "org_bad")).body.data.runaway_action).toBe("alert");
  });

  test("answers malformed JSON with 400", async () => {
    const res = await h.put("/v1/alerts/settings", "org_bad", "{not json");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  test("refuses a request without the gateway's signed identity with 401", async () => {
    const res = await fetch(`${h.base}/v1/alerts/settings`);
    expect(res.status).toBe(401);
    const forged = await fetch(`${h.base}/v1/alerts/runaway`, { headers: { "x-router-identity": "not.a.jwt" } });
    expect(forged.status).toBe(401);
  });
});

describe("GET /v1/alerts/runaway", () => {
  async function insertFlag(orgId: string, createdAt: Date, id: string): Promise<void> {
    await h.db.query(
      `INSERT INTO flags (id, org_id, subject_kind, subject, key_hash, key_name, action, kind, window_start, window_end,
         spend_nanodollars, usual_spend_nanodollars, requests, usual_requests, created_at, published_at)
       VALUES ($1, $2, 'agent', 'planner', NULL, NULL, 'alert', 'rate', $3, $3, 0, 0, 300, 0, $3, $3)`,
      [id, orgId, createdAt],
    );
  }

  test("lists the organisation's flags of the last 30 days, newest first, at most 100", async () => {
    const now = clock.now().getTime();
    for (let i = 0; i < 105; i++) await insertFlag("org_list", new Date(now - i * 60 * 60_000), `flag_list${String(i).padStart(3, "0")}`);
    await insertFlag("org_list", new Date(now - 31 * 24 * 60 * 60_000), "flag_too_old");
    await insertFlag("org_other", new Date(now), "flag_not_yours");

    const res = await h.get("/v1/alerts/runaway", "org_list", { role: "readonly" });

    expect(res.status).toBe(200);
    const ids = (res.body.data as Array<{ id: string }>).map((f) => f.id);
    expect(ids).toHaveLength(100);
    expect(ids[0]).toBe("flag_list000");
    expect(ids[99]).toBe("flag_list099");
    expect(ids).not.toContain("flag_not_yours");
    expect(res.body.next_cursor).toBeNull();
  });

  test("does not show a flag older than 30 days even when fewer than 100 are newer", async () => {
    const now = clock.now().getTime();
    await insertFlag("org_old", new Date(now - 29 * 24 * 60 * 60_000), "flag_recent_enough");
    await insertFlag("org_old", new Date(now - 30 * 24 * 60 * 60_000 - 1), "flag_just_too_old");

    const res = await h.get("/v1/alerts/runaway", "org_old");

    expect((res.body.data as Array<{ id: string }>).map((f) => f.id)).toEqual(["flag_recent_enough"]);
  });
});

test("answers /health with the database reachable", async () => {
  const res = await fetch(`${h.base}/health`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ status: "ok" });
});
