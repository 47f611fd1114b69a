import { Counter, Histogram } from "prom-client";
import { createMetricsRegistry, TalliedCounter, TalliedHistogram } from "@router/http-kit";

/** The same series fed to prom-client directly, for comparison. */
async function exposition(feed: (registry: ReturnType<typeof createMetricsRegistry>) => void): Promise<string> {
  const registry = createMetricsRegistry("demo", { defaultMetrics: false });
  feed(registry);
  return registry.metrics();
}

describe("metric tallies", () => {
  it("expose a counter's increments, by labels, as prom-client's own counter does", async () => {
    const labelNames = ["route", "status"] as const;
    const increments: Array<[{ route: string; status: string }, number]> = [
      [{ route: "/a", status: "200" }, 1],
      [{ route: "/a", status: "500" }, 1],
      [{ route: "/b", status: "200" }, 2],
      [{ route: "/a", status: "200" }, 3],
    ];
    const tallied = await exposition((registry) => {
      const c = new TalliedCounter({ name: "t_total", help: "T.", labelNames, registers: [registry] });
      for (const [labels, n] of increments) c.inc(labels, n);
    });
    const direct = await exposition((registry) => {
      const c = new Counter({ name: "t_total", help: "T.", labelNames, registers: [registry] });
      for (const [labels, n] of increments) c.inc(labels, n);
    });
    expect(tallied).toBe(direct);
    expect(tallied).toContain('t_total{route="/a",status="200",service="demo"} 4');
  });

  it("counts what came after a scrape on top of what the scrape saw", async () => {
    const registry = createMetricsRegistry("demo", { defaultMetrics: false });
    const c = new TalliedCounter({ name: "t_total", help: "T.", labelNames: ["outcome"], registers: [registry] });
    c.inc({ outcome: "complete" });
    expect(await registry.metrics()).toContain('t_total{outcome="complete",service="demo"} 1');
    c.inc({ outcome: "complete" }, 2);
    expect(await registry.metrics()).toContain('t_total{outcome="complete",service="demo"} 3');
  });

  it("expose a histogram's observations as prom-client's own histogram does, scraped or not", async () => {
    const config = { name: "h_seconds", help: "H.", labelNames: ["provider"] as const, buckets: [0.1, 1, 10] };
    const values = Array.from({ length: 2500 }, (_, i) => ({ provider: i % 3 === 0 ? "openai" : "anthropic", value: (i % 17) * 0.37 }));
    const tallied = await exposition((registry) => {
      const h = new TalliedHistogram({ ...config, registers: [registry] });
      // More than are held before they are handed over unscraped.
      for (const v of values) h.observe({ provider: v.provider }, v.value);
    });
    const direct = await exposition((registry) => {
      const h = new Histogram({ ...config, registers: [registry] });
      for (const v of values) h.observe({ provider: v.provider }, v.value);
    });
    expect(tallied).toBe(direct);
    expect(tallied).toContain('h_seconds_count{service="demo",provider="openai"} 834');
  });

  it("refuses a counter's decrease when it is made, not when scraped", async () => {
    const registry = createMetricsRegistry("demo", { defaultMetrics: false });
    const c = new TalliedCounter({ name: "t_total", help: "T.", registers: [registry] });
    expect(() => c.inc({}, -1)).toThrow(TypeError);
    expect(() => c.inc({}, Number.POSITIVE_INFINITY)).toThrow(TypeError);
    c.inc();
    expect(await registry.metrics()).toContain('t_total{service="demo"} 1');
  });

  it("refuses a value that is not a finite number when it is observed, not when scraped", async () => {
    const registry = createMetricsRegistry("demo", { defaultMetrics: false });
    const h = new TalliedHistogram({ name: "h_seconds", help: "H.", buckets: [1], registers: [registry] });
    expect(() => h.observe({}, Number.NaN)).toThrow(TypeError);
    h.observe({}, 0.5);
    expect(await registry.metrics()).toContain('h_seconds_count{service="demo"} 1');
  });
});
