import type { Request, RequestHandler, Response } from "express";
import { collectDefaultMetrics, Registry } from "prom-client";
import type { Logger } from "@router/logging";
import { createHttpApp, finishApp, listen, type RunningHttpServer } from "./app";

export const METRICS_PATH = "/metrics";

/** How often the event-loop delay is sampled for `nodejs_eventloop_lag_*`. */
const EVENT_LOOP_MONITORING_MS = 100;

/**
 * A registry for one service instance, never prom-client's global one, so several instances in one
 * process (tests, the one-process runner) keep their series apart. Every series carries
 * `service="<service>"`; the default Node process metrics are included unless turned off.
 */
export function createMetricsRegistry(service: string, opts: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  // The event-loop delay monitor samples every 100 ms instead of prom-client's 10: a timer a hundred
  // times a second costs an idle process about 2 ms of CPU a second, and any stall long enough to
  // matter still shows in the lag percentiles.
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
  return registry;
}

/** Answers `GET /metrics` with the registry in the Prometheus text exposition format. */
export function metricsRoute(registry: Registry): RequestHandler {
  return async (_req: Request, res: Response) => {
    const body = await registry.metrics();
    res.status(200).set("content-type", registry.contentType).set("cache-control", "no-store").send(body);
  };
}

export interface MetricsServerOptions {
  port: number;
  /** Loopback unless a scraper on another host must reach it. */
  host?: string;
  log: Logger;
}

/**
 * Serves only `GET /metrics` on a port of its own: an admin port kept off the public edge, or the
 * one HTTP port of a service that otherwise speaks only gRPC.
 */
export async function startMetricsServer(registry: Registry, opts: MetricsServerOptions): Promise<RunningHttpServer> {
  const app = createHttpApp({ log: opts.log });
  app.get(METRICS_PATH, metricsRoute(registry));
  finishApp(app, opts.log);
  return listen(app, opts.port, opts.host ?? "127.0.0.1");
}
