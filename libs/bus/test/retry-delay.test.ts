import { createLogger } from "@router/logging";
import { retryDelay, settingsOf } from "../src/settings";

const settings = settingsOf({ kind: "memory", clientId: "retry-delay", log: createLogger({ level: "silent" }), retryDelayMs: 100 });

describe("redelivery backoff", () => {
  it("doubles from retryDelayMs per failed attempt, stretched by at most as much again", () => {
    for (const [attempt, base] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [5, 1_600],
    ] as const) {
      const delays = Array.from({ length: 200 }, () => retryDelay(settings, attempt));
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(base);
      expect(Math.max(...delays)).toBeLessThanOrEqual(2 * base);
      // Jittered: replicas that failed together spread out instead of retrying in step.
      expect(new Set(delays).size).toBeGreaterThan(1);
    }
  });

  it("never waits longer than 30 seconds", () => {
    expect(retryDelay(settings, 20)).toBe(30_000);
  });
});
