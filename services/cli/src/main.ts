import { parseArgs } from "node:util";
import { ConfigError } from "@router/config";
import { createLogger } from "@router/logging";
import { loadCliConfig } from "./config";
import { runCatalogImport } from "./commands/catalog-import";
import { runEventsTail } from "./commands/events-tail";
import { runKafkaTopicsCreate } from "./commands/kafka-topics";
import { runMigrate } from "./commands/migrate";
import { runOrgCreate } from "./commands/org-create";
import { runKeyCreate, runOrgList } from "./commands/org-recovery";
import { runProbe } from "./commands/probe";
import { Stores } from "./stores";

const USAGE = `Router operator CLI

Usage: npm run router -- <command>

Commands:
  org create --name <name> [--operator]   Create an organisation; prints its management key once
        [--if-missing] [--key-file <path> | --key-secret <name>]
                                          --if-missing: nothing to do when an operator organisation
                                          exists; --key-file / --key-secret: hand the key over in a
                                          file (0600) or a Kubernetes Secret, not on stdout
  org list                                List every organisation (id, name, operator, members, keys)
  key create --org <org_id> [--name <n>]  Mint a new management key for an existing organisation
                                          (a lost operator key); printed once
  catalog import [<file>]                 Import the model catalog (default: the bundled catalog)
  migrate                                 Apply every service's database migrations
  events tail <topic>                     Print events on a bus topic as JSON lines (redis or kafka bus)
  kafka topics create                     Declare every bus topic and its .dlq on KAFKA_BROKERS
                                          (KAFKA_TOPIC_PARTITIONS, KAFKA_TOPIC_REPLICATION_FACTOR,
                                          KAFKA_TOPIC_MIN_INSYNC_REPLICAS); existing ones are kept
  probe --url <gateway> --region <name>   Call <gateway>/health every minute and record it for
        [--interval <s>] [--timeout-ms <ms>] [--once]
                                          GET /v1/status/uptime (needs DATABASE_URL; one per region)

Settings come from the environment, as for the services: DATABASE_URL (unset: the embedded store
under ROUTER_DATA_DIR, default ./.data, which only one process may hold: stop \`npm start\` first),
ROUTER_BUS, ROUTER_BUS_NAMESPACE, REDIS_URL, KAFKA_BROKERS, KAFKA_TOPIC_*, ROUTER_KEY_PEPPER.`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      operator: { type: "boolean", default: false },
      help: { type: "boolean" },
      url: { type: "string" },
      region: { type: "string" },
      interval: { type: "string", default: "60" },
      "timeout-ms": { type: "string", default: "10000" },
      once: { type: "boolean", default: false },
      org: { type: "string" },
      "if-missing": { type: "boolean", default: false },
      "key-file": { type: "string" },
      "key-secret": { type: "string" },
    },
  });
  const [group, action, arg] = positionals;
  if (values.help || !group) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const config = loadCliConfig(process.env);
  // Logs go to stderr: stdout carries the command's own output (a created key, an org list), which
  // scripts parse.
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "cli" }, destination: process.stderr });
  const stores = new Stores(config.DATABASE_URL, config.ROUTER_DATA_DIR);
  try {
    if (group === "org" && action === "create") {
      return await runOrgCreate(stores, config, {
        name: values.name,
        operator: values.operator ?? false,
        ifMissing: values["if-missing"] ?? false,
        keyFile: values["key-file"],
        keySecret: values["key-secret"],
      });
    }
    if (group === "org" && action === "list") return await runOrgList(stores);
    if (group === "key" && action === "create") return await runKeyCreate(stores, config, { org: values.org, name: values.name });
    if (group === "catalog" && action === "import") return await runCatalogImport(stores, arg);
    if (group === "migrate") return await runMigrate(stores);
    if (group === "events" && action === "tail") return await runEventsTail(config, log, arg);
    if (group === "kafka" && action === "topics" && arg === "create") return await runKafkaTopicsCreate(config, log);
    if (group === "probe") {
      const intervalSeconds = Number(values.interval);
      const timeoutMs = Number(values["timeout-ms"]);
      if (!Number.isInteger(intervalSeconds) || intervalSeconds < 1 || intervalSeconds > 3600) {
        process.stderr.write("--interval: whole seconds from 1 to 3600\n");
        return 2;
      }
      if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 60_000) {
        process.stderr.write("--timeout-ms: whole milliseconds from 100 to 60000\n");
        return 2;
      }
      const stop = new AbortController();
      for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => stop.abort());
      return await runProbe(stores, log, { url: values.url, region: values.region, intervalSeconds, timeoutMs, once: values.once ?? false }, stop.signal);
    }
    process.stderr.write(`unknown command: ${positionals.join(" ")}\n\n${USAGE}\n`);
    return 2;
  } finally {
    await stores.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError || err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
