import { Counter } from "prom-client";
import { createMetricsRegistry, startMetricsServer, type RunningHttpServer } from "@router/http-kit";
import { createLogger } from "@router/logging";

const log = createLogger({ level: "silent" });

describe("metrics exposition", () => {
  let server: RunningHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("serves a registry's series in the Prometheus text format with the service label", async () => {
    const registry = createMetricsRegistry("demo");
    new Counter({ name: "demo_things_total", help: "Things.", registers: [registry] }).inc(3);
    server = await startMetricsServer(registry, { port: 0, log });

    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    const text = await res.text();

    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(text).toContain("# TYPE demo_things_total counter");
    expect(text).toContain('demo_things_total{service="demo"} 3');
    expect(text).toContain("process_cpu_seconds_total");
  });

  it("keeps two registries in one process apart", async () => {
    const a = createMetricsRegistry("a", { defaultMetrics: false });
    const b = createMetricsRegistry("b", { defaultMetrics: false });
    new Counter({ name: "x_total", help: "X.", registers: [a] }).inc();
    new Counter({ name: "x_total", help: "X.", registers: [b] });

    expect(await a.metrics()).toContain('x_total{service="a"} 1');
    expect(await b.metrics()).toContain('x_total{service="b"} 0');
  });

  it("serves nothing but /metrics on the metrics port", async () => {
    server = await startMetricsServer(createMetricsRegistry("demo", { defaultMetrics: false }), { port: 0, log });
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/keys`);
    expect(res.status).toBe(404);
  });
});
