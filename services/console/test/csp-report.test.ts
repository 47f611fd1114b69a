import { Writable } from "node:stream";
import { call, startConsoleHarness, type ConsoleHarness } from "./console-harness";

describe("POST /csp-report", () => {
  let h: ConsoleHarness;
  const lines: Array<Record<string, any>> = [];
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    h = await startConsoleHarness("ccsp", { logTo: destination });
  });
  afterAll(async () => h.close());
  const violations = () => lines.filter((l) => l.msg === "console.csp.violation");

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
  it("counts the violations it logged in console_csp_violations_total", async () => {
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    const counted = /^console_csp_violations_total\{[^}]*\} (\d+)$/m.exec(metrics);
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(11);
  });
});
