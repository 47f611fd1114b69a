import type { EventBus, IncomingEvent } from "./port";

/**
 * Prefixes every topic with `<namespace>.` on the broker, so several installs (or parallel test
 * runs) can share one Redis or Kafka without seeing each other's events. Handlers still see the
 * plain topic name.
 */
export function namespaced(bus: EventBus, namespace: string): EventBus {
  const prefix = `${namespace}.`;
  return {
    publish: (event) => bus.publish({ ...event, topic: prefix + event.topic }),
    subscribe: (opts) => {
      const { batchHandler } = opts;
      const local = (event: IncomingEvent): IncomingEvent => ({
        ...event,
        topic: event.topic.startsWith(prefix) ? event.topic.slice(prefix.length) : event.topic,
      });
      return bus.subscribe({
        ...opts,
        topic: prefix + opts.topic,
        handler: (event) => opts.handler(local(event)),
        batchHandler: batchHandler && ((events) => batchHandler(events.map(local))),
      });
    },
    close: () => bus.close(),
  };
}
