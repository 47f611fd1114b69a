/** One CLI command: the words that name it, its one-line synopsis for the overview, and its own help. */
export interface CommandHelp {
  words: string[];
  synopsis: string;
  summary: string;
  /** Options and arguments, one per line, already aligned. */
  details: string;
}

export const COMMANDS: CommandHelp[] = [
  {
    words: ["org", "create"],
    synopsis: "org create --name <name> [--operator] [--if-missing] [--key-file <path> | --key-secret <name>]",
    summary: "Creates an organisation and prints its management key once (a JSON line on stdout).",
    details: `  --name <name>        the organisation's name, 1 to 80 characters (required)
  --operator           the operator organisation, which manages the deployment
  --if-missing         with --operator: nothing to do when an operator organisation exists (a
                       bootstrap Job may run again)
  --key-file <path>    write the key to this file (mode 0600, never overwritten), not to stdout
  --key-secret <name>  write the key into this Kubernetes Secret of the pod's namespace, not to stdout`,
  },
  {
    words: ["org", "list"],
    synopsis: "org list",
    summary: "Lists every organisation as JSON lines: id, name, operator, members, active management keys.",
    details: "  (no options)",
  },
  {
    words: ["key", "create"],
    synopsis: "key create --org <org_id> [--name <name>]",
    summary: "Mints a new management key for an existing organisation (an operator who lost theirs); printed once.",
    details: `  --org <org_id>  the organisation (org_...); \`org list\` shows them (required)
  --name <name>   the key's name, at most 80 characters (default: recovery management key)`,
  },
  {
    words: ["catalog", "import"],
    synopsis: "catalog import [<file>]",
    summary: "Validates and imports the model catalog into the routing store, and prints what changed.",
    details: "  <file>  a catalog JSON file (default: the bundled catalog)",
  },
  {
    words: ["migrate"],
    synopsis: "migrate [--create-roles]",
    summary: "Applies every service's database migrations and grants each service's role its own schema, one JSON line per schema.",
    details: `  --create-roles     also create a missing service role (<ROUTER_DB_ROLE_PREFIX><service>, default
                     router_gateway ...; DATABASE_URL's role then needs CREATEROLE)
  Run as the schemas' owner (DATABASE_URL). On Postgres each existing role gets USAGE on its schema and
  read/write on its tables, nothing elsewhere; ROUTER_DB_PASSWORD_<SERVICE> sets (or rotates) its password.`,
  },
  {
    words: ["events", "tail"],
    synopsis: "events tail <topic>",
    summary: "Prints the events on a bus topic as JSON lines, from a throwaway consumer group (redis or kafka bus).",
    details: "  <topic>  e.g. router.request.completed.v1 (required; needs ROUTER_BUS=redis or kafka)",
  },
  {
    words: ["kafka", "topics", "create"],
    synopsis: "kafka topics create",
    summary: "Declares every bus topic and its .dlq on KAFKA_BROKERS; existing ones are kept.",
    details: "  (no options; KAFKA_BROKERS, KAFKA_TOPIC_PARTITIONS, KAFKA_TOPIC_REPLICATION_FACTOR,\n  KAFKA_TOPIC_MIN_INSYNC_REPLICAS from the environment)",
  },
  {
    words: ["keys", "identity"],
    synopsis: "keys identity [--public-keys <file>]",
    summary: "Prints a new Ed25519 pair for the identity the gateway signs: kid, signing_key (private JWK), public_keys (JWKS).",
    details: `  --public-keys <file>  a JWKS file (the current ROUTER_IDENTITY_PUBLIC_KEYS): the new public key is
                        added to it, for a rotation (docs/runbook.md)`,
  },
  {
    words: ["probe"],
    synopsis: "probe --url <gateway> --region <name> [--interval <s>] [--timeout-ms <ms>] [--once]",
    summary: "Calls <gateway>/health every interval and reports it to the gateway for GET /v1/status/uptime (one probe per region).",
    details: `  --url <gateway>    the gateway's base URL, http:// or https:// (required)
  --region <name>    lower-case letters, digits and dashes, e.g. eu-west (required)
  --interval <s>     whole seconds between probes, 1 to 3600 (default 60)
  --timeout-ms <ms>  how long one probe may take, 100 to 60000 (default 10000)
  --once             probe once and exit
  Reports to <gateway>/v1/status/probes with ROUTER_PROBE_TOKEN (the gateway's own, required).`,
  },
];

const INVOCATION = "npm run router --";

const SETTINGS = `Settings come from the environment, as for the services: DATABASE_URL (unset: the embedded store
under ROUTER_DATA_DIR, default ./.data, which only one process may hold: stop \`npm start\` first),
ROUTER_BUS, ROUTER_BUS_NAMESPACE, REDIS_URL, KAFKA_BROKERS, KAFKA_TOPIC_*, ROUTER_KEY_PEPPER,
ROUTER_MIGRATE_ON_START (false: commands only check a schema, as its service's role), ROUTER_DB_ROLE_PREFIX,
ROUTER_DB_PASSWORD_<SERVICE>, ROUTER_PROBE_TOKEN.`;

/** The overview: every command on one line. */
export function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.words.join(" ").length));
  const lines = COMMANDS.map((c) => `  ${c.words.join(" ").padEnd(width)}  ${c.summary}`);
  return `Router operator CLI

Usage: ${INVOCATION} <command> [options]
       ${INVOCATION} <command> --help    (or: help <command>) that command's options

Commands:
${lines.join("\n")}

${SETTINGS}`;
}

/** The command `positionals` start with (its words, then its arguments), if any. */
export function commandOf(positionals: string[]): CommandHelp | undefined {
  return COMMANDS.find((c) => c.words.every((w, i) => positionals[i] === w));
}

/** The help of one command, or of several (`router org --help`), with the settings once at the end. */
export function commandHelp(...commands: CommandHelp[]): string {
  const parts = commands.map((c) => `Usage: ${INVOCATION} ${c.synopsis}\n\n${c.summary}\n\n${c.details}`);
  return `${parts.join("\n\n")}\n\n${SETTINGS}`;
}

/**
 * The commands whose first word is `group` (`router org --help` lists `org create` and `org list`),
 * or an empty list.
 */
export function commandsIn(group: string | undefined): CommandHelp[] {
  return COMMANDS.filter((c) => c.words[0] === group);
}
