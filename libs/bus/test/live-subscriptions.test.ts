import { DomainError } from "@router/errors";
import { BusMisconfiguredError } from "../src";
import { LiveSubscriptions } from "../src/live-subscriptions";

const failingWith = (err: Error) => {
  const calls: string[] = [];
  return {
    calls,
    subscription: {
      start: async () => {
        calls.push("start");
        throw err;
      },
      close: async () => void calls.push("close"),
    },
  };
};

describe("starting a subscription that fails", () => {
  it("passes a refused deployment on as it is, so the service stops with the fix", async () => {
    const refused = new BusMisconfiguredError("topic_not_declared", "declare it", { topic: "t", group: "g" }, new Error("UNKNOWN_TOPIC_OR_PARTITION"));
    const { subscription, calls } = failingWith(refused);
    await expect(new LiveSubscriptions().start(subscription)).rejects.toBe(refused);
    expect(calls).toEqual(["start", "close"]);
  });

  it("reports anything else as the broker being unreachable", async () => {
    const { subscription } = failingWith(new Error("connect ECONNREFUSED"));
    const failed = new LiveSubscriptions().start(subscription);
    await expect(failed).rejects.toBeInstanceOf(DomainError);
    await expect(failed).rejects.toMatchObject({ code: "router.bus_unavailable" });
  });
});
