import { ManualClock } from "@router/money";
import { waitFor } from "@router/testkit";
import { dataUri, pngBytes } from "./images";
import { startReportsHarness, type ReportsHarness } from "./reports-harness";
import { completedEvent, type IdentityOptions } from "./report-events";

let h: ReportsHarness;
const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
const acme = { id: "ws_acme", name: "Acme Corp" };
const as: IdentityOptions = { orgId: "org_rep", orgName: "Agency Ltd", workspace: acme };

const get = (path: string, who: IdentityOptions = as) => h.call("GET", path, who);

beforeAll(async () => {
  h = await startReportsHarness("reportsclient", clock);
  const event = completedEvent({ orgId: "org_rep", workspaceId: acme.id, listCostNanodollars: 1_500_000_000n, createdAtMs: BigInt(Date.parse("2026-11-02T08:00:00.000Z")) });
  await h.publish(event);
  await waitFor(async () => (await h.db.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [event.requestId])).rowCount > 0, {
    what: "the request counted",
  });
});

afterAll(async () => {
  await h.close();
});

describe("GET /v1/reports/workspaces/{id}", () => {
  it("reports the current UTC month by default, with the branding, the period so far and list-price totals", async () => {
    await h.call("PUT", "/v1/reports/branding", as, { brand_name: "Agency", brand_logo: dataUri("image/png", pngBytes()), brand_footer: "Usage report, not an invoice" });

    const res = await get(`/v1/reports/workspaces/${acme.id}`);

    expect(res.status).toBe(200);
    const r = res.body.data;
    expect(Object.keys(r).sort()).toEqual(
      ["branding", "by_agent", "by_day", "by_model", "currency", "generated_at", "month", "period", "totals", "workspace"].sort(),
    );
    expect(r).toMatchObject({
      workspace: { id: acme.id, name: "Acme Corp", name_in_month: "Client One" },
      month: "2026-11",
      period: { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z", ended: false },
      branding: { org_name: "Agency Ltd", brand_name: "Agency", brand_footer: "Usage report, not an invoice", brand_logo: expect.stringMatching(/^data:image\/png;base64,/) },
      currency: "USD",
      totals: { requests: 1, spend: 1.5, spend_nanodollars: "1500000000" },
      generated_at: "2026-11-21T10:00:00.000Z",
    });
    // Every day of the month so far, today included; days without requests are zeros.
    expect(r.by_day.map((d: any) => d.date)).toEqual(Array.from({ length: 21 }, (_, i) => `2026-11-${String(i + 1).padStart(2, "0")}`));
    expect(r.by_day[0]).toMatchObject({ requests: 0, spend: 0, spend_nanodollars: "0", prompt_tokens: 0 });
    expect(r.by_day[1]).toMatchObject({ requests: 1, spend_nanodollars: "1500000000" });
  });

  it("reports a month without requests as zeros over every day, with the workspace's current name", async () => {
    const res = await get(`/v1/reports/workspaces/${acme.id}?month=2026-02`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      workspace: { id: acme.id, name: "Acme Corp", name_in_month: null },
      month: "2026-02",
      period: { start: "2026-02-01T00:00:00.000Z", end: "2026-03-01T00:00:00.000Z", ended: true },
      totals: { requests: 0, spend: 0, spend_nanodollars: "0", requests_by_status: { complete: 0, error: 0, refused: 0, cancelled: 0 } },
      by_model: [],
      by_agent: [],
    });
    expect(res.body.data.by_day).toHaveLength(28);
  });

  it("takes the month from the injected clock: just after midnight UTC on the 1st it is the new month", async () => {
    clock.set(new Date("2026-12-01T00:00:00.000Z"));
    try {
      const res = await get(`/v1/reports/workspaces/${acme.id}`);
      expect(res.body.data).toMatchObject({ month: "2026-12", totals: { requests: 0 } });
      expect(res.body.data.by_day.map((d: any) => d.date)).toEqual(["2026-12-01"]);
      const november = await get(`/v1/reports/workspaces/${acme.id}?month=2026-11`);
      expect(november.body.data).toMatchObject({ period: { ended: true }, totals: { requests: 1 } });
      expect(november.body.data.by_day).toHaveLength(30);
    } finally {
      clock.set(new Date("2026-11-21T10:00:00.000Z"));
    }
  });

  it.each([
    ["2026-13", /YYYY-MM/],
    ["2026-1", /YYYY-MM/],
    ["26-11", /YYYY-MM/],
    ["2026-11-01", /YYYY-MM/],
    ["november", /YYYY-MM/],
    ["1969-12", /from 1970/],
    ["2026-12", /not begun/],
    ["2031-01", /not begun/],
  ])("refuses month=%s with a 400 naming month", async (month, message) => {
    const res = await get(`/v1/reports/workspaces/${acme.id}?month=${month}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field: "month" } });
    expect(res.body.error.message).toMatch(message);
  });

  it("refuses a repeated month parameter with a 400 naming month", async () => {
    const res = await get(`/v1/reports/workspaces/${acme.id}?month=2026-10&month=2026-11`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("month");
  });

  it("refuses a malformed workspace id with a 400 naming id", async () => {
    const res = await get("/v1/reports/workspaces/acme", { ...as, workspace: undefined });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("id");
  });

  it("answers 404 unless the gateway vouched for this workspace in the identity", async () => {
    const unchecked = await get(`/v1/reports/workspaces/${acme.id}`, { ...as, workspace: undefined });
    expect(unchecked.status).toBe(404);
    const another = await get(`/v1/reports/workspaces/${acme.id}`, { ...as, workspace: { id: "ws_other", name: "Other" } });
    expect(another.status).toBe(404);
  });

  it("never shows another organisation's figures for the same workspace id", async () => {
    const res = await get(`/v1/reports/workspaces/${acme.id}?month=2026-11`, { orgId: "org_stranger", workspace: acme });
    expect(res.status).toBe(200);
    expect(res.body.data.totals.requests).toBe(0);
    expect(res.body.data.branding.brand_name).toBeNull();
  });

  it("is open to every role, and closed to an inference key", async () => {
    for (const role of ["owner", "admin", "member", "billing", "readonly"] as const) {
      expect((await get(`/v1/reports/workspaces/${acme.id}`, { ...as, role })).status).toBe(200);
    }
    const inference = await get(`/v1/reports/workspaces/${acme.id}`, { ...as, credential: "inference" });
    expect(inference.status).toBe(403);
    expect(inference.body.error.code).toBe("permission_denied");
  });
});
