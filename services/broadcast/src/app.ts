import { join } from "node:path";
import type { EventBus } from "@router/bus";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { createHttpApp, finishApp, listen, metricsRoute, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { AllowedHosts, Outbound, type OutboundOptions, type OutboundStats } from "@router/outbound";
import { pruneHandledEvents } from "./consumer/handled-events";
import { subscribeRequestCompleted } from "./consumer/consumer";
import { Broadcaster } from "./delivery/broadcaster";
import { destinationRoutes } from "./destinations/destination-routes";
import { DestinationSecrets } from "./destinations/destination-secrets";
import { BroadcastMetrics } from "./metrics";

export { REQUEST_COMPLETED_TOPIC, CONSUMER_GROUP } from "./consumer/consumer";

export interface BroadcastDeps {
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  db: Db;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  /** 0 picks a free port. */
  httpPort: number;
  host?: string;
  /** Verifies the identity context the gateway signs and forwards. */
  identityKeys: IdentityPublicKeys;
  /** ROUTER_MASTER_KEY: seals signing secrets and header values at rest. */
  masterKey: string;
  /** Delivery settings (timeouts, retries, queue; the test-only allow-list and CA). */
  outbound?: Omit<OutboundOptions, "log" | "clock">;
  /** How long a handled event is remembered against replays. Default 7 days. */
  dedupeRetentionMs?: number;
  /** Node process metrics on /metrics (off when several services share one process). Default true. */
  defaultMetrics?: boolean;
}

export interface RunningBroadcast {
  httpPort: number;
  /** Resolves once every queued delivery has ended and been recorded (tests). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export const BROADCAST_MIGRATIONS_DIR = join(__dirname, "..", "migrations");

const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Starts the broadcast service: applies its migrations, fans every completed request out to the
 * organisation's destinations (off the request path, through the bounded outbound queue), and
 * serves the destination routes. The caller owns db and bus and closes them.
 */
export async function startBroadcast(deps: BroadcastDeps): Promise<RunningBroadcast> {
  const { log } = deps;
  await prepareSchema(deps.db, BROADCAST_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const outbound = new Outbound({ ...deps.outbound, log, clock: deps.clock });
  const metrics: BroadcastMetrics = new BroadcastMetrics({
    defaultMetrics: deps.defaultMetrics,
    // Waiting: in the destinations' lanes and in the shared outbound queue.
    queueStats: (): OutboundStats => {
      const shared = outbound.stats();
      return { queued: shared.queued + broadcaster.waiting(), running: shared.running };
    },
  });
  const secrets = new DestinationSecrets(deps.masterKey);
  const broadcaster: Broadcaster = new Broadcaster({ db: deps.db, secrets, outbound, clock: deps.clock, log, metrics });

  const retentionMs = deps.dedupeRetentionMs ?? DEFAULT_RETENTION_MS;
  const prune = () =>
    pruneHandledEvents(deps.db, new Date(deps.clock.now().getTime() - retentionMs)).catch((err: unknown) => {
      log.error({ err }, "broadcast.handled_events.prune_failed");
    });
  await prune();
  const pruning = setInterval(() => void prune(), PRUNE_EVERY_MS);
  pruning.unref();

  const subscription = await subscribeRequestCompleted(deps.bus, { db: deps.db, broadcaster, log, clock: deps.clock, metrics });

  const app = createHttpApp({ log });
  const readiness = new DatabaseReadiness(deps.db);
  app.get("/health", async (_req, res) => {
    const database = (await readiness.reachable()) ? "ok" : "unreachable";
    res.status(database === "ok" ? 200 : 503).json({ status: database === "ok" ? "ok" : "degraded", database, outbound: outbound.stats() });
  });
  // Before the identity check: the scraper signs nothing, and this port is internal.
  app.get("/metrics", metricsRoute(metrics.registry));
  app.use(requireIdentity(deps.identityKeys));
  app.use(
    destinationRoutes({
      db: deps.db,
      clock: deps.clock,
      secrets,
      broadcaster,
      allowedHosts: new AllowedHosts(deps.outbound?.allowHosts),
    }),
  );
  finishApp(app, log);

  const stopDelivering = async () => {
    clearInterval(pruning);
    await subscription.close();
    await outbound.close();
    await broadcaster.idle();
  };
  const server = await listen(app, deps.httpPort, deps.host ?? "127.0.0.1").catch(async (err: unknown) => {
    await stopDelivering();
    throw err;
  });
  log.info({ httpPort: server.port }, "broadcast.started");
  return {
    httpPort: server.port,
    idle: () => broadcaster.idle(),
    async close() {
      await server.close();
      // Consumption stops first; queued deliveries then get the outbound close timeout to finish.
      await stopDelivering();
    },
  };
}
