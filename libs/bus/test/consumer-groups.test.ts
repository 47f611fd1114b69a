import { consumerGroupOf, type EventBus, type SubscribeOptions } from "../src";
import { perTopicGroups, type BrokerSubscribeOptions } from "../src/consumer-groups";
import { namespaced } from "../src/namespace";

function recorder() {
  const subscribed: BrokerSubscribeOptions[] = [];
  const bus: EventBus = {
    publish: async () => undefined,
    subscribe: async (opts: SubscribeOptions) => {
      subscribed.push(opts);
      return { close: async () => undefined };
    },
    drain: async () => true,
    close: async () => undefined,
  };
  return { bus, subscribed };
}

describe("consumer groups", () => {
  it("are one per service and topic, named after both", () => {
    expect(consumerGroupOf("alerts", "router.spend.threshold_crossed.v1")).toBe("alerts.router.spend.threshold_crossed.v1");
    expect(consumerGroupOf("alerts", "router.spend.runaway_flagged.v1")).toBe("alerts.router.spend.runaway_flagged.v1");
  });

  it("refuse a service group with a dot, which could make two (group, topic) pairs one name", () => {
    expect(() => consumerGroupOf("alerts.router", "spend.v1")).toThrow(/group/);
  });

  it("are derived by the bus, with the service's group as the one the new group replaces", async () => {
    const { bus, subscribed } = recorder();
    const grouped = perTopicGroups(bus);
    await grouped.subscribe({ topic: "router.spend.threshold_crossed.v1", group: "alerts", handler: async () => undefined });
    await grouped.subscribe({ topic: "router.spend.runaway_flagged.v1", group: "alerts", handler: async () => undefined });
    expect(subscribed.map((s) => [s.group, s.formerGroup])).toEqual([
      ["alerts.router.spend.threshold_crossed.v1", "alerts"],
      ["alerts.router.spend.runaway_flagged.v1", "alerts"],
    ]);
  });

  it("carry the namespace on Kafka, the former group's too, and name the plain topic once", async () => {
    const { bus, subscribed } = recorder();
    await perTopicGroups(namespaced(bus, "eu", { groups: true })).subscribe({ topic: "t.v1", group: "activity", handler: async () => undefined });
    expect(subscribed[0]).toMatchObject({ topic: "eu.t.v1", group: "eu.activity.t.v1", formerGroup: "eu.activity" });
  });
});
