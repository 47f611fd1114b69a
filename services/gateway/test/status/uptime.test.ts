import { uptimeOf, uptimeWindow } from "../../src/status/uptime";
import { recordProbe } from "../../src/status/uptime-store";
import { call, startHarness, type Harness } from "../harness";

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
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness("gwuptime");
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
