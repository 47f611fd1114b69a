import type { EventBus, SubscribeOptions } from "../src";
import { namespaced } from "../src/namespace";

/** What the adapter underneath is asked for, per kind of broker. */
function recorder() {
  const subscribed: SubscribeOptions[] = [];
  const bus: EventBus = {
    publish: async () => undefined,
    subscribe: async (opts) => {
      subscribed.push(opts);
      return { close: async () => undefined };
    },
    drain: async () => true,
    close: async () => undefined,
  };
  return { bus, subscribed };
}

describe("a namespaced bus", () => {
  it("keeps Kafka consumer groups of two installs apart, since Kafka groups are broker-wide", async () => {
    const { bus, subscribed } = recorder();
    await namespaced(bus, "eu", { groups: true }).subscribe({ topic: "t.v1", group: "activity", handler: async () => undefined });
    expect(subscribed[0]).toMatchObject({ topic: "eu.t.v1", group: "eu.activity" });
  });

  it("leaves Redis groups as they are: they live inside the namespaced streams already", async () => {
    const { bus, subscribed } = recorder();
    await namespaced(bus, "eu", { groups: false }).subscribe({ topic: "t.v1", group: "activity", handler: async () => undefined });
    expect(subscribed[0]).toMatchObject({ topic: "eu.t.v1", group: "activity" });
  });
});
