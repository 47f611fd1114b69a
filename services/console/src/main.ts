import { startTracing } from "@router/tracing";
import { formerSignInSettings, loadConfig, parseIdentityPublicKeys, serviceSecrets, withCurrentNames } from "@router/config";
import { identityPublicKeys } from "@router/http-kit";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { clientOptionsFor, insecure } from "@router/grpc-kit";
import { systemClock } from "@router/money";
import { ledger } from "@router/proto";
import { ensureOperatorOrganisation, operatorOrganisationExists, startConsole } from "./app";
import { consoleConfigSchema, incompleteSignInProviders, pkceOptionsOf, signInOptionsOf } from "./config";

async function main(): Promise<void> {
  // Sign-in settings still under the gateway's former names are read under their new ones (warned below).
  const renamed = formerSignInSettings(process.env);
  const cfg = loadConfig(consoleConfigSchema, withCurrentNames(process.env, renamed));
  const log = createLogger({ level: cfg.LOG_LEVEL, base: { service: "console" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-console" });

  for (const setting of renamed) log.warn(setting, "console.setting_renamed");
  for (const { provider, missing } of incompleteSignInProviders(cfg)) {
    log.warn({ provider, missing }, "console.sign_in.provider_incomplete");
  }

  const secrets = serviceSecrets(
    process.env,
    ["ROUTER_IDENTITY_PUBLIC_KEYS", "ROUTER_MASTER_KEY", "ROUTER_KEY_PEPPER", "ROUTER_INTERNAL_SECRET"],
    { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined },
  );
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS));

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "console" });
  const ledgerClient = new ledger.LedgerServiceClient(cfg.LEDGER_GRPC_ADDR, insecure(), clientOptionsFor(cfg.LEDGER_GRPC_ADDR));
  const running = await startConsole({
    db: store.db,
    migrateOnStart: cfg.ROUTER_MIGRATE_ON_START,
    log,
    clock: systemClock,
    httpPort: cfg.CONSOLE_HTTP_PORT,
    grpcPort: cfg.CONSOLE_GRPC_PORT,
    identityKeys,
    masterKey: secrets.ROUTER_MASTER_KEY,
    pepper: secrets.ROUTER_KEY_PEPPER,
    csrfSecret: secrets.ROUTER_INTERNAL_SECRET,
    ledger: ledgerClient,
    grpcDeadlineMs: cfg.GRPC_DEADLINE_MS,
    publicUrl: cfg.ROUTER_PUBLIC_URL,
    ...pkceOptionsOf(cfg),
    ...signInOptionsOf(cfg),
    host: cfg.CONSOLE_HOST,
    probeToken: cfg.ROUTER_PROBE_TOKEN,
    dashboardDir: cfg.CONSOLE_DASHBOARD_DIR,
    gatewayUrl: cfg.CONSOLE_GATEWAY_URL,
  });
  log.info({ httpPort: running.httpPort, grpcPort: running.grpcPort, database: store.describe }, "console.listening");
  if (cfg.DATABASE_URL) {
    // In production the first operator organisation is an explicit step that hands its key to the
    // operator (the router-bootstrap Job writing it into a Secret, or `router org create --operator`
    // from the operator's terminal): a key printed here would travel with the container's log stream.
    if (!(await operatorOrganisationExists(store.db))) {
      log.warn(
        {
          how: "run the router-bootstrap Job (docs/runbook.md), or kubectl exec deploy/console -- node services/cli/dist/main.js org create --name <name> --operator (or npm run router -- org create ... with DATABASE_URL)",
        },
        "console.operator_organisation_missing",
      );
    }
  } else {
    const operator = await ensureOperatorOrganisation(store.db, secrets.ROUTER_KEY_PEPPER, systemClock);
    if (operator.created) {
      // Embedded: printed once to the terminal that started it, not the log stream.
      process.stdout.write(`\nOperator organisation created. Its management key (shown once, store it now):\n\n  ${operator.managementKey}\n\n`);
    }
  }

  stopOnSignals(log, "console", [
    { step: "console", run: () => running.close() },
    { step: "grpc", run: () => ledgerClient.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("console"));
