import { uptimeOf, uptimeWindow } from "../src/status/uptime";
import { recordProbe } from "../src/status/uptime-store";
import { call, startConsoleHarness, type ConsoleHarness } from "./console-harness";

const NOW = new Date("2026-11-21T10:00:00.000Z");

describe("uptime over 90 UTC days", () => {
  it("lists 90 days oldest first, ending today", () => {
    const u = uptimeOf([], NOW);
    expect(u.days).toHaveLength(90);
    expect(u.days[0]?.date).toBe("2026-08-24");
    expect(u.days[89]?.date).toBe("2026-11-21");
    expect(uptimeWindow(NOW)).toEqual({ from: "2026-08-24", to: "2026-11-21" });
    expect(u).toMatchObject({ overall: null, measured_days: 0 });
    expect(u.days.every((d) => d.uptime === null && d.probes === 0)).toBe(true);
  });

  it("leaves a day of fewer than 60 probes unmeasured and weights the overall figure by probes", () => {
    const u = uptimeOf(
      [
        { date: "2026-11-19", probes: 59, up: 0 }, // unmeasured: never counted, up or down
        { date: "2026-11-20", probes: 60, up: 30 },
        { date: "2026-11-21", probes: 240, up: 240 },
        { date: "2026-01-01", probes: 1000, up: 0 }, // outside the window
      ],
      NOW,
    );
    expect(u.days.slice(-3)).toEqual([
      { date: "2026-11-19", uptime: null, probes: 59 },
      { date: "2026-11-20", uptime: 0.5, probes: 60 },
      { date: "2026-11-21", uptime: 1, probes: 240 },
    ]);
    expect(u.measured_days).toBe(2);
    expect(u.overall).toBeCloseTo(270 / 300, 10);
  });
});

describe("GET /v1/status/uptime", () => {
  let h: ConsoleHarness;
  beforeAll(async () => {
    h = await startConsoleHarness("cuptime", { now: NOW });
  });
  afterAll(async () => h.close());

  it("counts probes from every region per UTC day, and serves the figure cached for a minute", async () => {
    for (let i = 0; i < 40; i++) {
      await recordProbe(h.db, { region: "eu-west", at: NOW, up: true });
      await recordProbe(h.db, { region: "us-east", at: NOW, up: i % 4 !== 0 });
    }
    const first = await call(h.url, "GET", "/v1/status/uptime");
    expect(first.status).toBe(200);
    expect(first.body.data.days.at(-1)).toEqual({ date: "2026-11-21", uptime: 70 / 80, probes: 80 });
    expect(first.body.data).toMatchObject({ overall: 70 / 80, measured_days: 1 });

    await recordProbe(h.db, { region: "eu-west", at: NOW, up: false });
    expect((await call(h.url, "GET", "/v1/status/uptime")).body.data.days.at(-1).probes).toBe(80);
    h.clock.advance(60_000);
    expect((await call(h.url, "GET", "/v1/status/uptime")).body.data.days.at(-1)).toEqual({ date: "2026-11-21", uptime: 70 / 81, probes: 81 });
  });
});

describe("POST /v1/status/probes", () => {
  const token = "probe-token-0123456789abcdef0123456789";
  let h: ConsoleHarness;
  beforeAll(async () => {
    h = await startConsoleHarness("cprobes", { probeToken: token, now: NOW });
  });
  afterAll(async () => h.close());

  it("counts a probe with the token at the console's clock, and refuses a wrong or missing token with 401", async () => {
    const report = (body: unknown, key?: string) => call(h.url, "POST", "/v1/status/probes", { key, body });
    expect(await report({ region: "eu-west", up: true }, token)).toMatchObject({ status: 201, body: { data: { region: "eu-west", day: "2026-11-21", up: true } } });
    expect((await report({ region: "eu-west", up: false }, token)).status).toBe(201);
    for (const wrong of [`${token}x`, token.slice(0, -1), undefined]) {
      const refused = await report({ region: "eu-west", up: true }, wrong);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe("unauthorized");
      expect(JSON.stringify(refused.body)).not.toContain(token);
    }
    const rows = await h.db.query("SELECT region, probes, up FROM uptime_days");
    expect(rows.rows).toEqual([{ region: "eu-west", probes: 2, up: 1 }]);
  });

  it("names the field of a bad report", async () => {
    const bad = await call(h.url, "POST", "/v1/status/probes", { key: token, body: { region: "EU West", up: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: "region" });
    const extra = await call(h.url, "POST", "/v1/status/probes", { key: token, body: { region: "eu", up: true, when: "now" } });
    expect(extra.body.error.details).toMatchObject({ field: "when" });
    // A late report (the probe kept it while the gateway was down) counts on its own day, up to 7 days back.
    const late = await call(h.url, "POST", "/v1/status/probes", { key: token, body: { region: "late", up: false, at: "2026-11-19T23:59:00Z" } });
    expect(late).toMatchObject({ status: 201, body: { data: { day: "2026-11-19" } } });
    for (const at of ["2026-11-14T09:59:00Z", "2026-11-21T10:01:01Z", "yesterday"]) {
      expect((await call(h.url, "POST", "/v1/status/probes", { key: token, body: { region: "eu", up: true, at } })).body.error.details).toMatchObject({ field: "at" });
    }
    expect((await call(h.url, "POST", "/v1/status/probes", { key: token, body: { region: "eu" } })).body.error.details).toMatchObject({ field: "up" });
  });

  it("refuses every report when the console has no token", async () => {
    const off = await startConsoleHarness("cprobesoff", { now: NOW });
    try {
      const refused = await call(off.url, "POST", "/v1/status/probes", { key: token, body: { region: "eu", up: true } });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toContain("ROUTER_PROBE_TOKEN");
    } finally {
      await off.close();
    }
  });
});
