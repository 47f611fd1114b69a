import { join } from "node:path";
import type { EventBus } from "@router/bus";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { createHttpApp, finishApp, listen, metricsRoute, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { AllowedHosts, Outbound, type OutboundOptions } from "@router/outbound";
import { channelRoutes } from "./channels/channel-routes";
import { SigningSecrets } from "./channels/signing-secrets";
import { DEFAULT_CHAT_HOOK_HOST } from "./config";
import { deliveryRoutes } from "./deliveries/delivery-routes";
import { schedulePruning, type Pruned } from "./deliveries/retention";
import { subscribeRunawayFlagged } from "./events/runaway-consumer";
import { subscribeThresholdCrossed } from "./events/threshold-consumer";
import { AlertsMetrics } from "./metrics";
import { AlertSender } from "./sending/alert-sender";
import { smtpEmailSender } from "./sending/email";

export { CONSUMER_GROUP } from "./events/consumer-deps";
export { thresholdToAnnounce } from "./events/threshold-matching";
export { DEFAULT_CHAT_HOOK_HOST, alertsEnvironment, checkAlertsEnvironment } from "./config";

export interface AlertsDeps {
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  /** The Node process metrics in this registry (default true); the one-process runner leaves them to the gateway. */
  defaultMetrics?: boolean;
  db: Db;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  /** 0 picks a free port. */
  httpPort: number;
  host?: string;
  /** Verifies the identity context the gateway signs and forwards. */
  identityKeys: IdentityPublicKeys;
  /** ROUTER_MASTER_KEY: seals webhook signing secrets. */
  masterKey: string;
  /** Outbound delivery tuning and the test-only overrides (`outboundOptionsOf`); log and clock come from here. */
  outbound?: Omit<OutboundOptions, "log" | "clock">;
  /** `chat` targets must be incoming-webhook URLs on this host. Default hooks.slack.com. */
  chatHookHost?: string;
  /** The deployment's mail server for `email` channels; none: email is not available. */
  email?: { smtpUrl: string; from: string };
  /** How often expired deliveries are deleted. Default one hour. */
  pruneIntervalMs?: number;
}

export interface RunningAlerts {
  httpPort: number;
  /** Deletes what is past retention now (also runs on the schedule). */
  prune(): Promise<Pruned>;
  /** Resolves once every alert the consumers dispatched is delivered (or given up) and recorded. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export const ALERTS_MIGRATIONS_DIR = join(__dirname, "..", "migrations");

/**
 * Starts the alerts service: applies its migrations, consumes threshold crossings and runaway flags
 * from the bus, delivers alerts to the organisations' channels, and serves the channel, test and
 * delivery-log routes. The caller owns db and bus and closes them.
 */
export async function startAlerts(deps: AlertsDeps): Promise<RunningAlerts> {
  const { log, clock } = deps;
  await prepareSchema(deps.db, ALERTS_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const outbound = new Outbound({ ...deps.outbound, log, clock });
  const metrics = new AlertsMetrics({ defaultMetrics: deps.defaultMetrics, queued: () => outbound.stats().queued });
  const email = deps.email
    ? smtpEmailSender({ smtpUrl: deps.email.smtpUrl, from: deps.email.from, timeoutMs: deps.outbound?.timeoutMs ?? 10_000, clock })
    : null;
  const secrets = new SigningSecrets(deps.masterKey);
  const sender = new AlertSender({ db: deps.db, outbound, email, secrets, clock, log, metrics });
  const consumerDeps = { db: deps.db, sender, clock, log, metrics };
  const subscriptions = [await subscribeThresholdCrossed(deps.bus, consumerDeps), await subscribeRunawayFlagged(deps.bus, consumerDeps)];
  const pruning = schedulePruning({ db: deps.db, clock, log, intervalMs: deps.pruneIntervalMs ?? 3_600_000 });

  const stopConsuming = async () => {
    pruning.stop();
    await Promise.all(subscriptions.map((s) => s.close()));
  };

  const app = createHttpApp({ log, bodyLimit: "64kb" });
  // 503 while the database does not answer: readiness takes the pod out of rotation until it does.
  const readiness = new DatabaseReadiness(deps.db);
  app.get("/health", async (_req, res) => {
    if (await readiness.reachable()) {
      res.json({ status: "ok" });
    } else {
      log.warn({ err: readiness.lastError }, "alerts.health.database_unreachable");
      res.status(503).json({ status: "unavailable", database: "unreachable" });
    }
  });
  // Before the identity check: the scraper signs nothing, and this port is internal.
  app.get("/metrics", metricsRoute(metrics.registry));
  app.use(requireIdentity(deps.identityKeys));
  app.use(
    channelRoutes({
      db: deps.db,
      clock,
      secrets,
      sender,
      rules: {
        chatHookHost: (deps.chatHookHost ?? DEFAULT_CHAT_HOOK_HOST).toLowerCase(),
        emailAvailable: email !== null,
        allowedHosts: new AllowedHosts(deps.outbound?.allowHosts),
      },
    }),
  );
  app.use(deliveryRoutes({ db: deps.db, clock }));
  finishApp(app, log);

  const server = await listen(app, deps.httpPort, deps.host ?? "127.0.0.1").catch(async (err: unknown) => {
    await stopConsuming();
    await outbound.close();
    throw err;
  });
  log.info({ httpPort: server.port, emailAvailable: email !== null }, "alerts.started");
  return {
    httpPort: server.port,
    prune: () => pruning.prune(),
    idle: () => sender.idle(),
    async close() {
      await stopConsuming();
      await server.close();
      // Lets queued deliveries finish (bounded), then records what they came to.
      await outbound.close();
      await sender.idle();
      email?.close();
    },
  };
}
