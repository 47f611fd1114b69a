import { Writable } from "node:stream";
import { createLogger } from "@router/logging";
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

describe("POST /csp-report", () => {
  let h: Harness;
  const lines: Array<Record<string, any>> = [];
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    h = await startHarness("gwcsp", { log: createLogger({ level: "info", destination }) });
  });
  afterAll(async () => h.close());
  const violations = () => lines.filter((l) => l.msg === "gateway.csp.violation");

  it("takes the legacy report form, logs four clipped fields and answers an empty 204", async () => {
    lines.length = 0;
    const long = `https://cdn.example/${"a".repeat(500)}`;
    const res = await call(h.url, "POST", "/csp-report", {
      headers: { "content-type": "application/csp-report" },
      body: {
        "csp-report": {
          "document-uri": "https://router.example/workspace",
          "violated-directive": "script-src 'self'",
          "blocked-uri": long,
          "source-file": "https://router.example/app.js",
          "script-sample": "secret()",
        },
      },
    });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull(); // no body at all: nothing echoed
    expect(violations()).toHaveLength(1);
    expect(violations()[0]?.csp).toEqual({
      document: "https://router.example/workspace",
      directive: "script-src 'self'",
      blocked: long.slice(0, 200),
      source: "https://router.example/app.js",
    });
    expect(JSON.stringify(lines)).not.toContain("secret()");
  });

  it("takes the Reporting API form and logs at most ten violations, skipping other report types", async () => {
    lines.length = 0;
    const report = (i: number) => ({ type: "csp-violation", body: { documentURL: `https://router.example/${i}`, effectiveDirective: "img-src", blockedURL: "data" } });
    const res = await call(h.url, "POST", "/csp-report", {
      headers: { "content-type": "application/reports+json" },
      body: [{ type: "deprecation", body: { id: "x" } }, ...Array.from({ length: 12 }, (_v, i) => report(i))],
    });
    expect(res.status).toBe(204);
    expect(violations().map((v) => v.csp.document)).toEqual(Array.from({ length: 10 }, (_v, i) => `https://router.example/${i}`));
  });

  it.each([
    ["application/json", JSON.stringify({ "csp-report": {} }), "content-type"],
    ["application/csp-report", "{not json", "body"],
    ["application/csp-report", JSON.stringify({ something: "else" }), "body"],
    ["application/reports+json", JSON.stringify({ not: "a list" }), "body"],
  ])("refuses %s %s naming %s", async (type, rawBody, field) => {
    const res = await call(h.url, "POST", "/csp-report", { headers: { "content-type": type }, rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
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
