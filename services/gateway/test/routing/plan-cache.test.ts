import { ManualClock } from "@router/money";
import { routing } from "@router/proto";
import { cachedRoutingPort } from "../../src/routing/plan-cache";
import type { RoutingPort } from "../../src/routing/routing-port";

const request = (over: Partial<routing.PlanRequest> = {}): routing.PlanRequest =>
  routing.PlanRequest.fromPartial({ orgId: "org_a", model: "openai/gpt-4o-mini", byokProviders: ["openai", "groq"], ...over });

/** Answers `answer-<n>` for the n-th call; `sampled` orders when the request names that model. */
function countingPort(): RoutingPort & { calls: routing.PlanRequest[] } {
  const calls: routing.PlanRequest[] = [];
  return {
    calls,
    plan: async (req) => {
      calls.push(req);
      return routing.PlanResponse.fromPartial({
        strategy: `answer-${calls.length}`,
        ordering: req.model === "sampled" ? "sampled" : "deterministic",
      });
    },
  };
}

/** A counting routing port behind a 1 s plan cache, on a clock the test moves. */
function cachedOneSecond() {
  const port = countingPort();
  const clock = new ManualClock();
  return { port, clock, cached: cachedRoutingPort(port, clock, { ttlMs: 1000 }) };
}

describe("the gateway's plan cache", () => {
  it("asks routing once for identical requests within the TTL, including concurrent ones", async () => {
    const { port, clock, cached } = cachedOneSecond();
    const answers = await Promise.all([cached.plan(request()), cached.plan(request()), cached.plan(request({ byokProviders: ["groq", "openai"] }))]);
    expect(port.calls).toHaveLength(1);
    expect(answers.map((a) => a.strategy)).toEqual(["answer-1", "answer-1", "answer-1"]);
    clock.advance(799);
    await cached.plan(request());
    expect(port.calls).toHaveLength(1);
  });

  it("answers from the cache past four fifths of the TTL while it asks routing again on the side", async () => {
    const { port, clock, cached } = cachedOneSecond();
    await cached.plan(request());
    clock.advance(800);
    expect((await cached.plan(request())).strategy).toBe("answer-1");
    expect(port.calls).toHaveLength(2);
    await new Promise((r) => setImmediate(r));
    expect((await cached.plan(request())).strategy).toBe("answer-2");
  });

  it("plans an organisation afresh once a configuration write through this gateway forgot it, and only that organisation", async () => {
    const { port, cached } = cachedOneSecond();
    await cached.plan(request());
    await cached.plan(request({ orgId: "org_b" }));
    cached.forgetOrganisation("org_a");
    expect((await cached.plan(request())).strategy).toBe("answer-3");
    expect((await cached.plan(request({ orgId: "org_b" }))).strategy).toBe("answer-2");
    expect((await cached.plan(request())).strategy).toBe("answer-3");
  });

  it("asks again once the TTL has passed", async () => {
    const { port, clock, cached } = cachedOneSecond();
    await cached.plan(request());
    clock.advance(1000);
    expect((await cached.plan(request())).strategy).toBe("answer-2");
  });

  it("never shares an answer across organisations, models or credentialed providers", async () => {
    const port = countingPort();
    const cached = cachedRoutingPort(port, new ManualClock(), { ttlMs: 1000 });
    await cached.plan(request());
    await cached.plan(request({ orgId: "org_b" }));
    await cached.plan(request({ model: "openai/gpt-4o" }));
    await cached.plan(request({ models: ["openai/gpt-4o"] }));
    await cached.plan(request({ byokProviders: ["openai"] }));
    await cached.plan(request({ routingSeed: "s1" }));
    await cached.plan(request({ provider: { sort: "latency", maxPricePromptPerMillion: 5n } as routing.ProviderPreferences }));
    await cached.plan(request({ openCircuits: ["ep_x"] }));
    expect(port.calls).toHaveLength(8);
  });

  it("hands the full request to routing, large prices included", async () => {
    const port = countingPort();
    const cached = cachedRoutingPort(port, new ManualClock(), { ttlMs: 1000 });
    const req = request({ provider: routing.ProviderPreferences.fromPartial({ sort: "price", maxPricePromptPerMillion: 12_000_000_000n }) });
    await cached.plan(req);
    // Only the order of the providers is normalised.
    expect(port.calls[0]).toEqual({ ...req, byokProviders: ["groq", "openai"] });
  });

  it("never reuses a weighted draw: each sampled plan is asked for afresh", async () => {
    const { port, cached } = cachedOneSecond();
    const answers = [await cached.plan(request({ model: "sampled" })), await cached.plan(request({ model: "sampled" }))];
    expect(port.calls).toHaveLength(2);
    expect(answers.map((a) => a.strategy)).toEqual(["answer-1", "answer-2"]);
  });

  it("asks routing every time for a request with a sticky key, whose pins move as requests are served", async () => {
    const { port, cached } = cachedOneSecond();
    for (const key of [{ sessionId: "s" }, { sessionId: "s" }, { promptCacheKey: "p" }, { headerSessionId: "h" }]) {
      await cached.plan(request(key));
    }
    expect(port.calls).toHaveLength(4);
  });

  it("does not keep a failed call", async () => {
    let fail = true;
    const port: RoutingPort = {
      plan: async () => {
        if (fail) throw new Error("routing down");
        return routing.PlanResponse.fromPartial({ strategy: "ok" });
      },
    };
    const cached = cachedRoutingPort(port, new ManualClock(), { ttlMs: 1000 });
    await expect(cached.plan(request())).rejects.toThrow("routing down");
    fail = false;
    expect((await cached.plan(request())).strategy).toBe("ok");
  });

  it("is a pass-through with a TTL of 0", async () => {
    const port = countingPort();
    const cached = cachedRoutingPort(port, new ManualClock(), { ttlMs: 0 });
    await cached.plan(request());
    await cached.plan(request());
    expect(port.calls).toHaveLength(2);
  });
});
