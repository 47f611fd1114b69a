import { TEST_REDIS_URL, waitFor } from "@router/testkit";
import { call, startHarness } from "./harness";

describe("GET /health", () => {
  it("reports ok, the version and an in-memory rate limiter when no Redis is configured", async () => {
    const h = await startHarness("gwhealth");
    try {
      const res = await call(h.url, "GET", "/health");
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: "ok", version: "9.9.9-test", rate_limiting: { store: "memory", shared: false } });
    } finally {
      await h.close();
    }
  });

  it("reports a shared rate limiter when Redis is configured", async () => {
    const h = await startHarness("gwhealthr", { redisUrl: TEST_REDIS_URL });
    try {
      // The gateway waits 2 s for Redis at start, then counts in memory and probes every 2 s until
      // Redis answers: on a loaded machine the report turns shared a probe later.
      const limiting = await waitFor(
        async () => {
          const r = (await call(h.url, "GET", "/health")).body.rate_limiting as { store: string; shared: boolean };
          return r.shared ? r : undefined;
        },
        { timeoutMs: 10_000, what: "the health report to show the rate limits shared on Redis" },
      );
      expect(limiting).toEqual({ store: "redis", shared: true });
    } finally {
      await h.close();
    }
  });

  it("reports the limits as not shared while Redis does not answer (each instance counts in memory)", async () => {
    const h = await startHarness("gwhealthrdown", { redisUrl: "redis://127.0.0.1:1" });
    try {
      const res = await call(h.url, "GET", "/health");
      expect(res.status).toBe(200);
      expect(res.body.rate_limiting).toEqual({ store: "redis", shared: false });
    } finally {
      await h.close();
    }
  });

  it("answers 500 with status error once the database is unreachable", async () => {
    const h = await startHarness("gwhealthdown");
    const url = h.url;
    await h.testDb.drop();
    try {
      const res = await call(url, "GET", "/health");
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ status: "error", version: "9.9.9-test", rate_limiting: { store: "memory", shared: false } });
    } finally {
      await h.close();
    }
  });
});
