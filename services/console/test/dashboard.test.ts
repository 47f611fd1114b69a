import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHttpApp, finishApp, listen, type RunningHttpServer } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { dashboardRoutes } from "../src/dashboard/dashboard-routes";

/** The dashboard's static pages and assets, served from a build directory, with their security headers. */
describe("dashboard routes", () => {
  const log = createLogger({ level: "silent" });
  let built: string;
  let servers: RunningHttpServer[] = [];

  async function serve(dir: string): Promise<string> {
    const app = createHttpApp({ log });
    app.use(dashboardRoutes({ dir, log }));
    finishApp(app, log);
    const server = await listen(app, 0);
    servers.push(server);
    return `http://127.0.0.1:${server.port}`;
  }

  beforeAll(() => {
    built = mkdtempSync(join(tmpdir(), "dashboard-"));
    mkdirSync(join(built, "assets"));
    writeFileSync(join(built, "index.html"), '<!doctype html><script type="module" src="/assets/app-1.js"></script>');
    writeFileSync(join(built, "assets", "app-1.js"), "export {};");
    writeFileSync(join(built, "assets", ".hidden"), "secret");
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
    rmSync(built, { recursive: true, force: true });
  });

  it.each(["/signin", "/auth", "/workspace", "/invite"])("serves %s as the page with the CSP reporting to /csp-report", async (path) => {
    const res = await fetch(`${await serve(built)}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self'; style-src 'self';.*frame-ancestors 'none'; report-uri \/csp-report; report-to csp/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(await res.text()).toContain("/assets/app-1.js");
  });

  it("serves assets as immutable and answers 404 for a missing or hidden one", async () => {
    const base = await serve(built);
    const asset = await fetch(`${base}/assets/app-1.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${base}/assets/.hidden`)).status).toBe(404);
    expect((await fetch(`${base}/assets/..%2Findex.html`)).status).toBe(404);
  });

  it("answers 503 with how to build when the dashboard is not built", async () => {
    const res = await fetch(`${await serve(join(built, "nothing-here"))}/workspace`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("npm run build");
  });
});
