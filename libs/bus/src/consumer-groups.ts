import { invalid } from "@router/errors";
import type { EventBus, SubscribeOptions } from "./port";

/**
 * What a broker adapter is asked to subscribe: the broker's consumer group, and the group it
 * replaces on that topic, whose position a new group starts from (the group name before it named
 * its topic).
 */
export interface BrokerSubscribeOptions extends SubscribeOptions {
  formerGroup?: string;
}

const SERVICE_GROUP = /^[A-Za-z0-9_-]+$/;

/**
 * The broker's consumer group of a service on one topic: `<group>.<topic>`, e.g.
 * `alerts.router.spend.threshold_crossed.v1`. One group per (service, topic) on every broker: on
 * Kafka a group that subscribes two topics through two consumers loses one of them (kafkajs's group
 * leader assigns only the topics it subscribed itself), so no group may ever span two topics. The
 * service group has no dots, so no two (group, topic) pairs share a name.
 */
export function consumerGroupOf(group: string, topic: string): string {
  if (!SERVICE_GROUP.test(group)) throw invalid("group", "must be the consuming service's name: letters, digits, '-' and '_' only");
  return `${group}.${topic}`;
}

/**
 * Services name their group after themselves (`group: "alerts"`); the bus derives the broker's group
 * per topic, so a group shared between topics cannot be configured. The service's name is passed on
 * as `formerGroup`: that is what the group was called before, and a new group starts where it stood.
 */
export function perTopicGroups(bus: EventBus): EventBus {
  return {
    publish: (event) => bus.publish(event),
    subscribe: (opts) => {
      const options: BrokerSubscribeOptions = { ...opts, group: consumerGroupOf(opts.group, opts.topic), formerGroup: opts.group };
      return bus.subscribe(options);
    },
    drain: (timeoutMs) => bus.drain(timeoutMs),
    close: () => bus.close(),
  };
}
