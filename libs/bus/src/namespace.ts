import type { BrokerSubscribeOptions } from "./consumer-groups";
import type { EventBus, IncomingEvent } from "./port";

/**
 * Prefixes every topic with `<namespace>.` on the broker, so several installs (or parallel test
 * runs) can share one Redis or Kafka without seeing each other's events. Handlers still see the
 * plain topic name. With `groups` (Kafka, where consumer groups are broker-wide rather than per
 * topic) consumer groups get the prefix too: kafkajs hands a group's partitions of every topic to
 * all of its members, so a group shared by two installs would mix their events.
 */
export function namespaced(bus: EventBus, namespace: string, scope: { groups: boolean }): EventBus {
  const prefix = `${namespace}.`;
  return {
    publish: (event) => bus.publish({ ...event, topic: prefix + event.topic }),
    subscribe: (opts: BrokerSubscribeOptions) => {
      const { batchHandler, formerGroup } = opts;
      const local = (event: IncomingEvent): IncomingEvent => ({
        ...event,
        topic: event.topic.startsWith(prefix) ? event.topic.slice(prefix.length) : event.topic,
      });
      const options: BrokerSubscribeOptions = {
        ...opts,
        topic: prefix + opts.topic,
        group: scope.groups ? prefix + opts.group : opts.group,
        formerGroup: scope.groups && formerGroup ? prefix + formerGroup : formerGroup,
        handler: (event) => opts.handler(local(event)),
        batchHandler: batchHandler && ((events) => batchHandler(events.map(local))),
      };
      return bus.subscribe(options);
    },
    drain: (timeoutMs) => bus.drain(timeoutMs),
    close: () => bus.close(),
  };
}
