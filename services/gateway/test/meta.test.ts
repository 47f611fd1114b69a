import { waitFor } from "@router/testkit";
import { call, startHarness, type Harness } from "./harness";

describe("GET /v1/region", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness("gwregion", { regionHeaders: { region: "CF-IPCountry", subdivision: "x-edge-subdivision" } });
  });
  afterAll(async () => h.close());

  it.each([
    [{ "cf-ipcountry": "de", "x-edge-subdivision": "BY" }, { region: "DE", subdivision: "BY" }],
    [{ "cf-ipcountry": "US" }, { region: "US", subdivision: null }],
    // an edge's placeholders for unknown and Tor, and junk, are no region
    [{ "cf-ipcountry": "XX", "x-edge-subdivision": "BY" }, { region: null, subdivision: null }],
    [{ "cf-ipcountry": "T1" }, { region: null, subdivision: null }],
    [{ "cf-ipcountry": "Germany" }, { region: null, subdivision: null }],
    [{ "cf-ipcountry": "FR", "x-edge-subdivision": "<script>" }, { region: "FR", subdivision: null }],
    [{}, { region: null, subdivision: null }],
  ])("reads the trusted edge headers %j", async (headers, expected) => {
    const res = await call(h.url, "GET", "/v1/region", { headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: expected });
  });

  it("trusts no header when none is configured", async () => {
    const plain = await startHarness("gwregionoff");
    try {
      const res = await call(plain.url, "GET", "/v1/region", { headers: { "cf-ipcountry": "DE" } });
      expect(res.body).toEqual({ data: { region: null, subdivision: null } });
    } finally {
      await plain.close();
    }
  });
});

describe("liveness and readiness", () => {
  it("keeps liveness up while the database is gone; readiness and /health follow the database", async () => {
    const h = await startHarness("gwlive");
    try {
      expect((await call(h.url, "GET", "/readyz")).status).toBe(200);
      await h.testDb.drop();
      // Readiness answers from a database probe at most a second old.
      await waitFor(async () => (await call(h.url, "GET", "/readyz")).status !== 200, { timeoutMs: 5_000, what: "readiness to follow the database" });
      expect((await call(h.url, "GET", "/readyz")).status).toBe(500);
      expect((await call(h.url, "GET", "/health")).status).toBe(500);
      const live = await call(h.url, "GET", "/livez");
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: "ok", version: "9.9.9-test" });
    } finally {
      await h.close();
    }
  });
});
