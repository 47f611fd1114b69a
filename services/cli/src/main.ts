import { parseArgs } from "node:util";
import { ConfigError } from "@router/config";
import { createLogger } from "@router/logging";
import { loadCliConfig } from "./config";
import { runCatalogImport } from "./commands/catalog-import";
import { runEventsTail } from "./commands/events-tail";
import { runKafkaTopicsCreate } from "./commands/kafka-topics";
import { runKeysIdentity } from "./commands/keys-identity";
import { runMigrate } from "./commands/migrate";
import { runOrgCreate } from "./commands/org-create";
import { runKeyCreate, runOrgList } from "./commands/org-recovery";
import { runProbe } from "./commands/probe";
import { commandHelp, commandOf, commandsIn, overview } from "./help";
import { Stores } from "./stores";

/** What `help` prints for the words after it (or `--help` for the words before it), and its exit code. */
function help(words: string[]): { text: string; code: number } {
  if (words.length === 0) return { text: overview(), code: 0 };
  const command = commandOf(words);
  if (command) return { text: commandHelp(command), code: 0 };
  const group = commandsIn(words[0]);
  if (group.length > 0) return { text: commandHelp(...group), code: 0 };
  return { text: `unknown command: ${words.join(" ")}\n\n${overview()}`, code: 2 };
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      operator: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
      url: { type: "string" },
      region: { type: "string" },
      interval: { type: "string", default: "60" },
      "timeout-ms": { type: "string", default: "10000" },
      once: { type: "boolean", default: false },
      org: { type: "string" },
      "if-missing": { type: "boolean", default: false },
      "key-file": { type: "string" },
      "key-secret": { type: "string" },
      "public-keys": { type: "string" },
      "create-roles": { type: "boolean", default: false },
    },
  });
  const [group, action, arg] = positionals;
  if (!group) {
    // Bare `router`: the overview, as an error (a script that forgot its command fails).
    process[values.help ? "stdout" : "stderr"].write(`${overview()}\n`);
    return values.help ? 0 : 2;
  }
  if (values.help || group === "help") {
    const asked = help(group === "help" ? positionals.slice(1) : positionals);
    process[asked.code === 0 ? "stdout" : "stderr"].write(`${asked.text}\n`);
    return asked.code;
  }
  // Needs no store, bus or settings: it only makes a key pair.
  if (group === "keys" && action === "identity") return runKeysIdentity({ publicKeysFile: values["public-keys"] });
  const config = loadCliConfig(process.env);
  // Logs go to stderr: stdout carries the command's own output (a created key, an org list), which
  // scripts parse.
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "cli" }, destination: process.stderr });
  const stores = new Stores(config.DATABASE_URL, config.ROUTER_DATA_DIR, config.ROUTER_MIGRATE_ON_START);
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
    if (group === "migrate") return await runMigrate(stores, config, { createRoles: values["create-roles"] ?? false });
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
      return await runProbe(log, { url: values.url, region: values.region, token: config.ROUTER_PROBE_TOKEN, intervalSeconds, timeoutMs, once: values.once ?? false }, stop.signal);
    }
    process.stderr.write(`unknown command: ${positionals.join(" ")}\n\n${overview()}\n`);
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
