import { call, startHarness } from "./harness";

describe("GET /health", () => {
  it("reports ok, the version and an in-memory rate limiter when no Redis is configured", async () => {
    const h = await startHarness("gwhealth");
    try {
      const res = await call(h.url, "GET", "/health");
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: "ok", version: "9.9.9-test", rate_limiting: "memory" });
    } finally {
      await h.close();
    }
  });

  it("reports a shared rate limiter when Redis is configured", async () => {
    const h = await startHarness("gwhealthr", { redisUrl: "redis://127.0.0.1:6379" });
    try {
      expect((await call(h.url, "GET", "/health")).body.rate_limiting).toBe("redis");
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
      expect(res.body).toEqual({ status: "error", version: "9.9.9-test", rate_limiting: "memory" });
    } finally {
      await h.close();
    }
  });
});
