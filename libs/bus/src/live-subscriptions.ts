import { DomainError } from "@router/errors";
import { BusMisconfiguredError } from "./kafka/kafka-errors";
import type { Subscription } from "./port";

interface Startable {
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The subscriptions a broker adapter has running, so closing the bus closes every one of them. */
export class LiveSubscriptions<S extends Startable> {
  private readonly live = new Set<S>();

  /**
   * Starts `subscription`; a broker that cannot be reached now is `router.bus_unavailable`, one that
   * refuses the deployment (Kafka: undeclared topic, ACLs) its `BusMisconfiguredError`.
   */
  async start(subscription: S): Promise<Subscription> {
    this.live.add(subscription);
    try {
      await subscription.start();
    } catch (err) {
      this.live.delete(subscription);
      await subscription.close();
      // A broker that refuses the deployment is not an outage: its error says what to fix.
      if (err instanceof BusMisconfiguredError) throw err;
      throw new DomainError("router.bus_unavailable", "could not subscribe: the event broker is unreachable", { cause: err });
    }
    return {
      close: async () => {
        await subscription.close();
        this.live.delete(subscription);
      },
    };
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.close()));
  }
}
