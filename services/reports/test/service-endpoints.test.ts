import { ManualClock } from "@router/money";
import { metricSample, waitFor } from "@router/testkit";
import { startReportsHarness, type ReportsHarness } from "./reports-harness";
import { completedEvent } from "./report-events";

let h: ReportsHarness;

beforeAll(async () => {
  h = await startReportsHarness("reportsendpoints", new ManualClock());
});

afterAll(() => h.close());

const scrape = async () => (await fetch(`${h.base}/metrics`)).text();

test("answers /health and /metrics on the internal port without the signed identity, and nothing else", async () => {
  const health = await fetch(`${h.base}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });
  const metrics = await fetch(`${h.base}/metrics`);
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toContain("# TYPE reports_events_counted_total counter");
  expect((await fetch(`${h.base}/v1/reports/branding`)).status).toBe(401);
});

test("counts deliveries as counted or duplicate, and reports served", async () => {
  const event = completedEvent({ orgId: "org_metrics", workspaceId: "ws_metrics" });
  await h.publish(event, "evt-m-1");
  await waitFor(async () => metricSample(await scrape(), "reports_events_counted_total", { result: "counted" }) === 1, { what: "one counted" });
  await h.publish(event, "evt-m-1");
  await waitFor(async () => metricSample(await scrape(), "reports_events_counted_total", { result: "duplicate" }) === 1, { what: "one duplicate" });

  const res = await h.call("GET", "/v1/reports/workspaces/ws_metrics", { orgId: "org_metrics", workspace: { id: "ws_metrics", name: "M" } });
  expect(res.status).toBe(200);
  expect(metricSample(await scrape(), "reports_client_reports_total", {})).toBe(1);
});

test("answers an unknown route with the error envelope", async () => {
  const res = await h.call("POST", "/v1/reports/branding", {}, {});
  expect(res.status).toBe(404);
  expect(res.body.error).toMatchObject({ status: 404, code: "not_found" });
});
