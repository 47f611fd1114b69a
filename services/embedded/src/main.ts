import { startTracing } from "@router/tracing";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startActivity } from "@router/activity";
import { startAlerts } from "@router/alerts";
import { startBroadcast } from "@router/broadcast";
import { ensureOperatorOrganisation, incompleteSignInProviders, loopbackHostOf, pkceOptionsOf, signInOptionsOf, startConsole } from "@router/console";
import { busConfigOf, createBus, type EventBus } from "@router/bus";
import { formerSignInSettings, parseIdentityPublicKeys, providerBaseUrls, resolveSecrets } from "@router/config";
import { identityPublicKeys } from "@router/http-kit";
import { createPostgresDb, EmbeddedPostgres, isNewEmbeddedStore, type Db } from "@router/db";
import { migrateGateway, storedResponseOptionsOf, rateLimitOptionsOf, regionOptionsOf, startGateway, upstreamOptionsOf } from "@router/gateway";
import { feeScheduleOf, startLedger, stripeSettingsOf } from "@router/ledger";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals, type Logger } from "@router/logging";
import { systemClock } from "@router/money";
import { outboundOptionsOf } from "@router/outbound";
import { startReports } from "@router/reports";
import { startRouting } from "@router/routing";
import { startRunaway } from "@router/runaway";
import { loadEmbeddedConfig } from "./config";
import { prepareNewStore } from "./new-store";
import { checkPortsAvailable } from "./ports";

/** How long the consumers get to write what the gateway published while it drained. */
const BUS_DRAIN_MS = 10_000;

const VERSION = (JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;

/** Runs gateway, console, routing, ledger, activity, reports, alerts, broadcast and runaway in this one process on embedded defaults. */
async function main(): Promise<void> {
  const config = loadEmbeddedConfig(process.env);
  // Before anything is written under ROUTER_DATA_DIR: a port in use is one line, and no new directory.
  await checkPortsAvailable(config);
  // Each service logs through a child carrying its own name; the runner's own lines say "router".
  const root = createLogger({ level: config.LOG_LEVEL });
  const log = root.child({ service: "router" });
  for (const { provider, missing } of incompleteSignInProviders(config)) {
    log.warn({ provider, missing }, "console.sign_in.provider_incomplete");
  }
  for (const renamed of formerSignInSettings(process.env)) {
    log.warn(renamed, "router.setting_renamed");
  }
  installProcessHandlers(log);
  // One provider for every service of the process; off unless the OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router", version: VERSION });

  const { secrets, generated } = resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: true });
  // The same split as a deployment: the gateway signs identities with its private key, the services verify with the public set.
  const identityKeys = identityPublicKeys(parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS));
  const pgDir = join(config.ROUTER_DATA_DIR, "pg");
  if (!config.DATABASE_URL && isNewEmbeddedStore(pgDir)) {
    log.info({ dir: pgDir }, "router.embedded.preparing_new_store");
    await prepareNewStore(config.ROUTER_DATA_DIR, process.env);
  }
  const embeddedPg = config.DATABASE_URL ? null : await EmbeddedPostgres.open(pgDir);
  const openDb = (schema: string): Db =>
    embeddedPg ? embeddedPg.forSchema(schema) : createPostgresDb({ url: config.DATABASE_URL ?? "", schema });
  const bus: EventBus = await createBus(
    busConfigOf(config, { clientId: "router", dataDir: config.ROUTER_DATA_DIR, log, outboxDir: join(config.ROUTER_DATA_DIR, "outbox") }),
  );
  log.info(
    {
      database: embeddedPg ? `embedded PGlite in ${pgDir}` : "DATABASE_URL",
      cache: config.REDIS_URL ? "REDIS_URL" : "in-memory",
      rate_limits: config.REDIS_URL ? "REDIS_URL (shared)" : "in memory, this process",
      bus: config.ROUTER_BUS === "memory" ? "in-process" : config.ROUTER_BUS,
      generated_secrets: generated,
    },
    "router.embedded.defaults",
  );

  const clock = systemClock;
  // One process: the Node process metrics (and their event-loop monitor and GC observer) are the
  // gateway's to collect and export; every other service leaves them out.
  const routingSvc = await startRouting({
    defaultMetrics: false,
    db: openDb("routing"),
    bus,
    log: root.child({ service: "routing" }),
    clock,
    httpPort: 0,
    // The gateway calls Plan and the ledger in this process: the same handlers and messages as over
    // gRPC, without HTTP/2 framing and socket writes on every call (and no gRPC port).
    grpcPort: "in-process",
    identityKeys,
    redisUrl: config.REDIS_URL,
  });
  const ledgerSvc = await startLedger({
    defaultMetrics: false,
    db: openDb("ledger"),
    bus,
    log: root.child({ service: "ledger" }),
    clock,
    grpcPort: "in-process",
    httpPort: 0,
    identityKeys,
    stripe: stripeSettingsOf(config),
    fees: feeScheduleOf(config),
  });
  const activitySvc = await startActivity({
    defaultMetrics: false,
    db: openDb("activity"),
    bus,
    log: root.child({ service: "activity" }),
    clock,
    httpPort: 0,
    identityKeys,
  });
  const reportsSvc = await startReports({
    defaultMetrics: false,
    db: openDb("reports"),
    bus,
    log: root.child({ service: "reports" }),
    clock,
    httpPort: 0,
    identityKeys,
  });
  const runawaySvc = await startRunaway({
    defaultMetrics: false,
    db: openDb("runaway"),
    bus,
    log: root.child({ service: "runaway" }),
    clock,
    httpPort: 0,
    identityKeys,
  });
  const alertsLog = root.child({ service: "alerts" });
  const alertsSvc = await startAlerts({
    defaultMetrics: false,
    db: openDb("alerts"),
    bus,
    log: alertsLog,
    clock,
    httpPort: 0,
    identityKeys,
    masterKey: secrets.ROUTER_MASTER_KEY,
    outbound: outboundOptionsOf(config, { log: alertsLog }),
    chatHookHost: config.ALERTS_CHAT_HOOK_HOST,
    email: config.ALERTS_SMTP_URL && config.ALERTS_EMAIL_FROM ? { smtpUrl: config.ALERTS_SMTP_URL, from: config.ALERTS_EMAIL_FROM } : undefined,
  });
  const { log: _outboundLog, clock: _outboundClock, ...outbound } = outboundOptionsOf(config, { log });
  const broadcastSvc = await startBroadcast({
    db: openDb("broadcast"),
    bus,
    log: root.child({ service: "broadcast" }),
    clock,
    httpPort: 0,
    identityKeys,
    masterKey: secrets.ROUTER_MASTER_KEY,
    outbound,
    defaultMetrics: false,
  });
  const gatewayDb = openDb("gateway");
  // The gateway's schema first: the console's first migrations bring along what the gateway kept before it.
  await migrateGateway(gatewayDb);
  // The console's MCP tools call the gateway, whose port is known once it listens (after the console).
  let gatewayUrl = "";
  const consoleDb = openDb("console");
  const consoleSvc = await startConsole({
    defaultMetrics: false,
    db: consoleDb,
    log: root.child({ service: "console" }),
    clock,
    httpPort: 0,
    grpcPort: "in-process",
    identityKeys,
    masterKey: secrets.ROUTER_MASTER_KEY,
    pepper: secrets.ROUTER_KEY_PEPPER,
    csrfSecret: secrets.ROUTER_INTERNAL_SECRET,
    ledger: ledgerSvc.inProcess,
    grpcDeadlineMs: config.GRPC_DEADLINE_MS,
    publicUrl: config.ROUTER_PUBLIC_URL ?? (() => gatewayUrl),
    gatewayUrl: () => gatewayUrl,
    ...pkceOptionsOf(config),
    ...signInOptionsOf(config),
  });
  const gateway = await startGateway({
    db: gatewayDb,
    bus,
    log: root.child({ service: "gateway" }),
    clock,
    port: config.PORT,
    host: config.HOST,
    secrets,
    routing: routingSvc.inProcess,
    ledger: ledgerSvc.inProcess,
    console: consoleSvc.inProcess,
    activityUrl: `http://127.0.0.1:${activitySvc.httpPort}`,
    alertsUrl: `http://127.0.0.1:${alertsSvc.httpPort}`,
    runawayUrl: `http://127.0.0.1:${runawaySvc.httpPort}`,
    routingUrl: `http://127.0.0.1:${routingSvc.httpPort}`,
    ledgerUrl: `http://127.0.0.1:${ledgerSvc.httpPort ?? 0}`,
    reportsUrl: `http://127.0.0.1:${reportsSvc.httpPort}`,
    broadcastUrl: `http://127.0.0.1:${broadcastSvc.httpPort}`,
    consoleUrl: `http://127.0.0.1:${consoleSvc.httpPort}`,
    providerBaseUrls: providerBaseUrls(process.env),
    redisUrl: config.REDIS_URL,
    grpcDeadlineMs: config.GRPC_DEADLINE_MS,
    metricsPort: config.METRICS_PORT,
    metricsHost: config.METRICS_HOST,
    ...upstreamOptionsOf(config),
    ...storedResponseOptionsOf(config),
    ...rateLimitOptionsOf(config),
    ...regionOptionsOf(config),
    version: VERSION,
  });
  gatewayUrl = `http://${loopbackHostOf(config.HOST)}:${gateway.port}`;

  const operator = await ensureOperatorOrganisation(consoleDb, secrets.ROUTER_KEY_PEPPER, clock);
  const url = config.ROUTER_PUBLIC_URL?.replace(/\/+$/, "") ?? `http://${browsableHost(config.HOST)}:${gateway.port}`;
  if (operator.created && operator.managementKey) {
    // Printed once, on first start only; the store keeps only its hash.
    process.stdout.write(
      `\nOperator organisation created. Its management key (shown once, store it now):\n\n  ${operator.managementKey}\n\n` +
        `Sign in to the dashboard with it: ${url}/signin\n\n`,
    );
  }
  log.info({ url, dashboard: `${url}/signin` }, "router.embedded.ready");

  // The order keeps every served request: the gateway stops taking requests, finishes or ends its
  // streams and publishes their completions; every consumer then takes and writes what was published
  // (the in-process bus keeps nothing across a restart); the services stop, consumers first; the bus
  // flushes its outbox; the store closes last.
  stopOnSignals(
    log,
    "router.embedded",
    [
      {
        step: "gateway",
        run: () => gateway.close(),
        timeoutMs: gateway.closeTimeoutMs,
        waitingFor: () => {
          const open = gateway.drainProgress();
          return open && { what: `${openRequests(open)} to finish`, untilMs: open.graceEndsAt };
        },
        // A second Ctrl-C: the streams are cut now; each still ends with its error chunk and is recorded.
        hurry: () => gateway.hurryClose(),
      },
      { step: "bus.drain", run: () => drainBus(bus, log), timeoutMs: BUS_DRAIN_MS + 1_000 },
      { step: "console", run: () => consoleSvc.close() },
      { step: "reports", run: () => reportsSvc.close() },
      { step: "alerts", run: () => alertsSvc.close() },
      { step: "runaway", run: () => runawaySvc.close() },
      { step: "activity", run: () => activitySvc.close() },
      { step: "broadcast", run: () => broadcastSvc.close() },
      { step: "ledger", run: () => ledgerSvc.close() },
      { step: "routing", run: () => routingSvc.close() },
      { step: "bus", run: () => bus.close() },
      { step: "store", run: () => embeddedPg?.close() },
      { step: "tracing", run: () => tracing.shutdown() },
    ],
    // The person at the terminal sees what the stop waits for and what a second Ctrl-C does.
    { say: (line) => process.stderr.write(`${line}\n`) },
  );
}

/** "2 streams and 1 request", as the countdown says it. */
function openRequests({ streams, requests }: { streams: number; requests: number }): string {
  const count = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  return [streams && count(streams, "stream"), requests && count(requests, "request")].filter(Boolean).join(" and ");
}

/** The address a browser on this machine reaches a listener on `host` at (a wildcard is every address). */
function browsableHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Waits for the consumers to write every event published so far. An event a consumer keeps failing
 * on is not waited for past the deadline: the log line names the shutdown that left it behind.
 */
async function drainBus(bus: EventBus, log: Logger): Promise<void> {
  if (!(await bus.drain(BUS_DRAIN_MS))) log.warn({ timeoutMs: BUS_DRAIN_MS }, "router.embedded.bus_not_drained");
}

main().catch(exitOnStartFailure("router"));
