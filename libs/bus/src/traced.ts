import { contextFrom, inSpan, linkFrom, SpanKind, traceHeaders, tracingEnabled } from "@router/tracing";
import type { EventBus, IncomingEvent } from "./port";

/**
 * Carries the trace across the bus when tracing is on (`@router/tracing`): a published event takes
 * the active context as `traceparent`/`tracestate` headers; a handled event runs in a consumer span
 * whose parent is the publisher's (a batch of events from several traces links to each instead).
 * Off, it adds nothing but a boolean check.
 */
export function traced(bus: EventBus): EventBus {
  return {
    publish: (event) => (tracingEnabled() ? bus.publish({ ...event, headers: { ...event.headers, ...traceHeaders() } }) : bus.publish(event)),
    subscribe: (opts) => {
      const { handler, batchHandler } = opts;
      const attributes = (events: IncomingEvent[]) => ({
        "messaging.destination.name": opts.topic,
        "messaging.consumer.group.name": opts.group,
        "messaging.batch.message_count": events.length,
      });
      return bus.subscribe({
        ...opts,
        handler: (event) =>
          tracingEnabled()
            ? inSpan(`process ${opts.topic}`, { kind: SpanKind.CONSUMER, parent: contextFrom(event.headers), attributes: attributes([event]) }, () =>
                handler(event),
              )
            : handler(event),
        batchHandler:
          batchHandler &&
          ((events) => {
            if (!tracingEnabled()) return batchHandler(events);
            // One event: its own trace goes on. Several: one span linked to each of theirs.
            const only = events.length === 1 ? events[0] : undefined;
            const links = only ? [] : events.map((e) => linkFrom(e.headers)).filter((l) => l !== null);
            return inSpan(
              `process ${opts.topic}`,
              { kind: SpanKind.CONSUMER, parent: only ? contextFrom(only.headers) : undefined, links, attributes: attributes(events) },
              () => batchHandler(events),
            );
          }),
      });
    },
    drain: (timeoutMs) => bus.drain(timeoutMs),
    close: () => bus.close(),
  };
}
