import { parseArgs } from "node:util";
import { ConfigError } from "@router/config";
import { createLogger } from "@router/logging";
import { loadCliConfig } from "./config";
import { runCatalogImport } from "./commands/catalog-import";
import { runEventsTail } from "./commands/events-tail";
import { runMigrate } from "./commands/migrate";
import { runOrgCreate } from "./commands/org-create";
import { Stores } from "./stores";

const USAGE = `Router operator CLI

Usage: npm run router -- <command>

Commands:
  org create --name <name> [--operator]   Create an organisation; prints its management key once
  catalog import [<file>]                 Import the model catalog (default: the bundled catalog)
  migrate                                 Apply every service's database migrations
  events tail <topic>                     Print events on a bus topic as JSON lines (redis or kafka bus)

Settings come from the environment, as for the services: DATABASE_URL (unset: the embedded store
under ROUTER_DATA_DIR, default ./.data), ROUTER_BUS, REDIS_URL, KAFKA_BROKERS, ROUTER_KEY_PEPPER.`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: "string" }, operator: { type: "boolean", default: false }, help: { type: "boolean" } },
  });
  const [group, action, arg] = positionals;
  if (values.help || !group) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const config = loadCliConfig(process.env);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "cli" } });
  const stores = new Stores(config.DATABASE_URL, config.ROUTER_DATA_DIR);
  try {
    if (group === "org" && action === "create") {
      return await runOrgCreate(stores, config, { name: values.name, operator: values.operator ?? false });
    }
    if (group === "catalog" && action === "import") return await runCatalogImport(stores, arg);
    if (group === "migrate") return await runMigrate(stores);
    if (group === "events" && action === "tail") return await runEventsTail(config, log, arg);
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
