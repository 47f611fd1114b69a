import { SIGNATURE_HEADER, verifySignature } from "@router/outbound";
import { orgId, startAlertsHarness, type AlertsHarness } from "./alerts-harness";

let h: AlertsHarness;

beforeAll(async () => {
  h = await startAlertsHarness("alertschannels");
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.receiver.requests.length = 0;
  h.receiver.respondWith(() => ({ status: 200 }));
});

describe("adding and listing channels", () => {
  it("adds a webhook with the default thresholds and returns its signing secret once", async () => {
    const org = orgId();
    const target = `${h.receiver.url}/hook/first`;
    const created = await h.call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "webhook", target, name: "ops" });

    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^ch_[0-9a-f]{32}$/),
      kind: "webhook",
      target,
      name: "ops",
      thresholds: [50, 80, 100],
      disabled: false,
      created_at: "2026-11-21T10:00:00.000Z",
      signing_secret: expect.stringMatching(/^whsec_/),
    });

    const listed = await h.call("GET", "/v1/alerts/channels", { orgId: org });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [{ ...created.body.data, signing_secret: undefined }], next_cursor: null, email_available: false });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.data.signing_secret);

    const stored = await h.db.query<{ signing_secret_sealed: string }>("SELECT signing_secret_sealed FROM channels WHERE id = $1", [created.body.data.id]);
    expect(stored.rows[0]?.signing_secret_sealed).toMatch(/^v1\./);
    expect(stored.rows[0]?.signing_secret_sealed).not.toContain(created.body.data.signing_secret.slice(6));
  });

  it("keeps thresholds as whole percentages, sorted and without repeats; a chat channel has no secret", async () => {
    const org = orgId();
    const created = await h.call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "chat", target: `${h.receiver.url}/services/T1/B1/x`, thresholds: [100, 25, 25, 1] });
    expect(created.status).toBe(201);
    expect(created.body.data.thresholds).toEqual([1, 25, 100]);
    expect(created.body.data).not.toHaveProperty("signing_secret");
  });

  it.each([
    [{ target: "https://hooks.example.com/x" }, "kind"],
    [{ kind: "pager", target: "https://hooks.example.com/x" }, "kind"],
    [{ kind: "webhook" }, "target"],
    [{ kind: "webhook", target: 42 }, "target"],
    [{ kind: "webhook", target: "http://hooks.example.com/x" }, "target"],
    [{ kind: "webhook", target: "https://hooks.example.com:8443/x" }, "target"],
    [{ kind: "webhook", target: "https://10.0.0.8/hook" }, "target"],
    [{ kind: "webhook", target: "https://169.254.169.254/latest" }, "target"],
    [{ kind: "webhook", target: "https://localhost/hook" }, "target"],
    [{ kind: "chat", target: "https://hooks.example.com/services/x" }, "target"],
    [{ kind: "email", target: "ops@example.com" }, "kind"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", thresholds: [0] }, "thresholds.0"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", thresholds: [50, 101] }, "thresholds.1"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", thresholds: [50.5] }, "thresholds.0"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", thresholds: [] }, "thresholds"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", thresholds: "50" }, "thresholds"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", name: "n".repeat(101) }, "name"],
    [{ kind: "webhook", target: "https://hooks.example.com/x", colour: "red" }, "colour"],
  ])("refuses %j with a 400 naming %s", async (body, field) => {
    const res = await h.call("POST", "/v1/alerts/channels", { orgId: orgId() }, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
    expect(res.body.error.message).toMatch(new RegExp(`^${field.replace(".", "\\.")}: `));
  });

  it("refuses a body that is not an object", async () => {
    const res = await h.call("POST", "/v1/alerts/channels", { orgId: orgId() }, [1]);
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("body");
  });

  it("allows at most 20 channels per organisation", async () => {
    const org = orgId();
    for (let i = 0; i < 20; i++) await h.addWebhook(org);
    const res = await h.call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "webhook", target: "https://hooks.example.com/21" });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "conflict", details: { limit: 20 } });
    expect((await h.call("GET", "/v1/alerts/channels", { orgId: org })).body.data).toHaveLength(20);
    // Another organisation is not affected.
    expect((await h.call("POST", "/v1/alerts/channels", { orgId: orgId() }, { kind: "webhook", target: "https://hooks.example.com/1" })).status).toBe(201);
  });
});

describe("who may do what", () => {
  it("lets every role list, and only config:write add, remove or test", async () => {
    const org = orgId();
    const { id } = await h.addWebhook(org);
    for (const role of ["owner", "admin", "member", "billing", "readonly"] as const) {
      expect((await h.call("GET", "/v1/alerts/channels", { orgId: org, role })).status).toBe(200);
      expect((await h.call("GET", "/v1/alerts/deliveries", { orgId: org, role })).status).toBe(200);
    }
    for (const role of ["billing", "readonly"] as const) {
      const add = await h.call("POST", "/v1/alerts/channels", { orgId: org, role }, { kind: "webhook", target: "https://hooks.example.com/x" });
      expect(add.status).toBe(403);
      expect(add.body.error.code).toBe("permission_denied");
      expect((await h.call("POST", `/v1/alerts/channels/${id}/test`, { orgId: org, role })).status).toBe(403);
      expect((await h.call("DELETE", `/v1/alerts/channels/${id}`, { orgId: org, role })).status).toBe(403);
    }
    expect(h.receiver.requests).toHaveLength(0);
    const member = await h.call("POST", "/v1/alerts/channels", { orgId: org, role: "member" }, { kind: "webhook", target: "https://hooks.example.com/x" });
    expect(member.status).toBe(201);
  });

  it("refuses an inference key and a request without the gateway's signed identity", async () => {
    const org = orgId();
    expect((await h.call("GET", "/v1/alerts/channels", { orgId: org, credential: "inference" })).status).toBe(403);
    expect((await h.call("GET", "/v1/alerts/channels", null)).status).toBe(401);
  });

  it("never shows, removes or tests another organisation's channel", async () => {
    const owner = orgId();
    const other = orgId();
    const { id } = await h.addWebhook(owner);
    expect((await h.call("GET", "/v1/alerts/channels", { orgId: other })).body.data).toEqual([]);
    expect((await h.call("POST", `/v1/alerts/channels/${id}/test`, { orgId: other })).status).toBe(404);
    expect((await h.call("DELETE", `/v1/alerts/channels/${id}`, { orgId: other })).status).toBe(404);
    expect((await h.call("GET", "/v1/alerts/channels", { orgId: owner })).body.data).toHaveLength(1);
    expect(h.receiver.requests).toHaveLength(0);
  });

  it("answers a malformed channel id with a 400 naming id", async () => {
    const res = await h.call("DELETE", "/v1/alerts/channels/not-an-id", { orgId: orgId() });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("id");
  });
});

describe("test alerts and the delivery log", () => {
  it("delivers a signed test event at once and records it", async () => {
    const org = orgId();
    const { id, secret } = await h.addWebhook(org, { name: "ops hook" });
    const res = await h.call("POST", `/v1/alerts/channels/${id}/test`, { orgId: org });

    expect(res.body).toEqual({ data: { status: "sent", http_status: 200, error: null } });
    expect(h.receiver.requests).toHaveLength(1);
    const got = h.receiver.requests[0]!;
    const signature = got.headers[SIGNATURE_HEADER] as string;
    expect(verifySignature(signature, got.body, secret, { nowS: Date.parse("2026-11-21T10:00:00.000Z") / 1000 })).toBe(true);
    const body = JSON.parse(got.body) as Record<string, any>;
    expect(body).toMatchObject({ type: "test", organization_id: org, created_at: "2026-11-21T10:00:00.000Z", data: { channel_id: id } });

    const log = await h.call("GET", "/v1/alerts/deliveries", { orgId: org });
    expect(log.body.data).toEqual([
      {
        id: body.id,
        channel_id: id,
        channel_name: "ops hook",
        channel_kind: "webhook",
        event: "test",
        threshold: null,
        status: "sent",
        http_status: 200,
        error: null,
        key_name: null,
        key_hash_prefix: null,
        agent_tag: null,
        attempts: 1,
        created_at: "2026-11-21T10:00:00.000Z",
      },
    ]);
  });

  it("reports a receiver answering 500 as failed after the retries, in our own words", async () => {
    const org = orgId();
    const { id } = await h.addWebhook(org);
    h.receiver.respondWith(() => ({ status: 500, body: "internal details of the receiver" }));
    const res = await h.call("POST", `/v1/alerts/channels/${id}/test`, { orgId: org });

    expect(res.body.data).toEqual({ status: "failed", http_status: 500, error: "the receiver answered HTTP 500 (after 3 attempts)" });
    expect(h.receiver.requests).toHaveLength(3);
    const [row] = (await h.call("GET", "/v1/alerts/deliveries", { orgId: org })).body.data;
    expect(row).toMatchObject({ status: "failed", http_status: 500, attempts: 3, event: "test" });
  });

  it("posts a chat channel's test as one line of text, unsigned", async () => {
    const org = orgId();
    const created = await h.call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "chat", target: `${h.receiver.url}/services/T/B/c`, name: "team" });
    await h.call("POST", `/v1/alerts/channels/${created.body.data.id}/test`, { orgId: org });
    const got = h.receiver.requests[0]!;
    expect(got.path).toBe("/services/T/B/c");
    expect(JSON.parse(got.body)).toEqual({ text: 'Router alert: test alert for channel "team".' });
    expect(got.headers[SIGNATURE_HEADER]).toBeUndefined();
  });

  it("keeps a removed channel's deliveries with channel_id null", async () => {
    const org = orgId();
    const { id } = await h.addWebhook(org, { name: "gone soon" });
    await h.call("POST", `/v1/alerts/channels/${id}/test`, { orgId: org });
    expect((await h.call("DELETE", `/v1/alerts/channels/${id}`, { orgId: org })).body).toEqual({ data: { id, deleted: true } });
    expect((await h.call("DELETE", `/v1/alerts/channels/${id}`, { orgId: org })).status).toBe(404);
    const [row] = (await h.call("GET", "/v1/alerts/deliveries", { orgId: org })).body.data;
    expect(row).toMatchObject({ channel_id: null, channel_name: "gone soon", channel_kind: "webhook", status: "sent" });
  });

  it("lists the last 50 attempts newest first, and prunes those past 90 days on the schedule", async () => {
    const org = orgId();
    const { id } = await h.addWebhook(org);
    const start = h.clock.now();
    for (let i = 0; i < 52; i++) {
      h.clock.set(new Date(start.getTime() + i * 60_000));
      await h.call("POST", `/v1/alerts/channels/${id}/test`, { orgId: org });
    }
    const listed = (await h.call("GET", "/v1/alerts/deliveries", { orgId: org })).body.data as { created_at: string }[];
    expect(listed).toHaveLength(50);
    expect(listed[0]?.created_at).toBe(new Date(start.getTime() + 51 * 60_000).toISOString());
    expect(listed[49]?.created_at).toBe(new Date(start.getTime() + 2 * 60_000).toISOString());

    // 90 days after the 30th attempt: the first 31 are past retention, the rest are kept.
    h.clock.set(new Date(start.getTime() + 90 * 86_400_000 + 30 * 60_000));
    const pruned = await h.alerts.prune();
    expect(pruned.deliveries).toBeGreaterThanOrEqual(31);
    const left = await h.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE org_id = $1", [org]);
    expect(left.rows[0]?.n).toBe(21);
    expect((await h.call("GET", "/v1/alerts/deliveries", { orgId: org })).body.data).toHaveLength(21);
    h.clock.set(start);
  });
});
