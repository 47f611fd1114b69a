import { events } from "@router/proto";
import { healthIncrements } from "../src/health/health-increments";
import { HealthSnapshot } from "../src/health/health-snapshot";

const NOW = new Date("2025-11-01T12:07:30.000Z");
const at = (iso: string) => BigInt(new Date(iso).getTime());

function completed(attempts: Array<Partial<events.UpstreamAttempt>>, createdAt = "2025-11-01T12:07:00.000Z") {
  return events.RequestCompleted.fromPartial({ requestId: "gen-1", createdAtMs: at(createdAt), attempts });
}

describe("healthIncrements", () => {
  it("places each attempt in the 5-minute bucket it started in and sums per endpoint and bucket", () => {
    const incs = healthIncrements(
      completed([
        { endpointId: "ep_b", status: "ok", startedAtMs: at("2025-11-01T12:04:59.999Z"), durationMs: 10, ttftMs: 5 },
        { endpointId: "ep_a", status: "error", httpStatus: 500, startedAtMs: at("2025-11-01T12:05:00.000Z"), durationMs: 20 },
        { endpointId: "ep_a", status: "ok", startedAtMs: at("2025-11-01T12:06:00.000Z"), durationMs: 30, ttftMs: 7 },
      ]),
      NOW,
    );

    expect(incs.map((i) => [i.endpointId, new Date(i.bucketStartMs).toISOString(), i.attempts, i.failures, i.durationSumMs, i.ttftSumMs, i.ttftCount])).toEqual([
      ["ep_a", "2025-11-01T12:05:00.000Z", 2, 1, 50, 7, 1],
      ["ep_b", "2025-11-01T12:00:00.000Z", 1, 0, 10, 5, 1],
    ]);
  });

  it("counts timeouts, broken connections and stream errors as failures, but not a caller's 4xx, a 3xx, a cancel or a request never sent", () => {
    const incs = healthIncrements(
      completed([
        { endpointId: "ep_timeout", status: "error", errorCode: "router.upstream_timeout" },
        { endpointId: "ep_redirect", status: "error", httpStatus: 301, errorCode: "http_301" },
        { endpointId: "ep_stream", status: "error", httpStatus: 200, errorCode: "router.upstream_stream_error" },
        { endpointId: "ep_404", status: "error", httpStatus: 404, errorCode: "http_404" },
        { endpointId: "ep_unsupported", status: "error", errorCode: "router.unsupported_request" },
        // The gateway could not build or send the request: the provider never saw it.
        { endpointId: "ep_not_sent", status: "error", errorCode: "router.request_not_sent" },
      ]),
      NOW,
    );

    expect(incs.map((i) => [i.endpointId, i.attempts, i.failures])).toEqual([
      ["ep_stream", 1, 1],
      ["ep_timeout", 1, 1],
    ]);
  });

  it("falls back to the request's time, never places an attempt in the future and drops one older than 24 hours", () => {
    const incs = healthIncrements(
      completed([
        { endpointId: "ep_no_start", status: "ok" },
        { endpointId: "ep_future", status: "ok", startedAtMs: at("2025-11-01T13:00:00.000Z") },
        { endpointId: "ep_old", status: "ok", startedAtMs: at("2025-10-31T12:04:59.000Z") },
        { endpointId: "", status: "ok" },
      ]),
      NOW,
    );

    expect(incs.map((i) => [i.endpointId, new Date(i.bucketStartMs).toISOString()])).toEqual([
      ["ep_future", "2025-11-01T12:05:00.000Z"],
      ["ep_no_start", "2025-11-01T12:05:00.000Z"],
    ]);
  });
});

describe("throughput increments", () => {
  it("counts the completion tokens and generating time of the attempt that served, and nothing for the others", () => {
    const incs = healthIncrements(
      events.RequestCompleted.fromPartial({
        requestId: "gen-2",
        createdAtMs: at("2025-11-01T12:07:00.000Z"),
        endpointId: "ep_b",
        usage: { completionTokens: 300 },
        attempts: [
          { endpointId: "ep_a", status: "error", httpStatus: 503, durationMs: 50 },
          { endpointId: "ep_b", status: "ok", durationMs: 1600, ttftMs: 100 },
        ],
      }),
      NOW,
    );

    expect(incs.map((i) => [i.endpointId, i.outputTokens, i.generationMs])).toEqual([
      ["ep_a", 0, 0],
      ["ep_b", 300, 1500],
    ]);
  });
});

describe("HealthSnapshot", () => {
  const row = (endpointId: string, recentAttempts: number, recentFailures: number) => ({
    endpointId,
    recentAttempts,
    recentFailures,
    dayAttempts: recentAttempts,
    dayFailures: recentFailures,
    dayTtftSumMs: 0,
    dayTtftCount: 0,
    dayOutputTokens: 0,
    dayGenerationMs: 0,
    dayToolCalls: 0,
    dayInvalidToolCalls: 0,
  });

  it("calls an endpoint degraded at a 50% recent failure rate over at least 5 attempts", () => {
    const snapshot = new HealthSnapshot([row("ep_half", 10, 5), row("ep_few", 4, 4), row("ep_fine", 10, 4)]);

    expect(["ep_half", "ep_few", "ep_fine", "ep_unknown"].map((id) => snapshot.isDegraded(id))).toEqual([true, false, false, false]);
    expect(snapshot.of("ep_fine")).toEqual({ uptime: 0.6, latencyMs: null, throughput: null, toolCallReliability: null });
    expect(snapshot.of("ep_unknown")).toEqual({ uptime: null, latencyMs: null, throughput: null, toolCallReliability: null });
  });

  it("smooths the recent failure rate by one phantom success, and measures throughput in tokens per second", () => {
    const snapshot = new HealthSnapshot([
      row("ep_one_failure", 1, 1),
      row("ep_mostly_failing", 9, 9),
      { ...row("ep_fast", 4, 0), dayOutputTokens: 1000, dayGenerationMs: 4000 },
    ]);

    expect(snapshot.recentFailureRate("ep_one_failure")).toBe(0.5);
    expect(snapshot.recentFailureRate("ep_mostly_failing")).toBe(0.9);
    expect(snapshot.recentFailureRate("ep_fast")).toBe(0);
    expect(snapshot.of("ep_fast").throughput).toBe(250);
  });
});
