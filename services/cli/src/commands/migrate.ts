import { ensureServiceRole, migrate, serviceRoleName } from "@router/db";
import { ACTIVITY_MIGRATIONS_DIR } from "@router/activity";
import { ALERTS_MIGRATIONS_DIR } from "@router/alerts";
import { BROADCAST_MIGRATIONS_DIR } from "@router/broadcast";
import { CONSOLE_MIGRATIONS_DIR } from "@router/console";
import { GATEWAY_MIGRATIONS_DIR } from "@router/gateway";
import { LEDGER_MIGRATIONS_DIR } from "@router/ledger";
import { REPORTS_MIGRATIONS_DIR } from "@router/reports";
import { ROUTING_MIGRATIONS_DIR } from "@router/routing";
import { RUNAWAY_MIGRATIONS_DIR } from "@router/runaway";
import type { CliConfig, SERVICE_SCHEMAS } from "../config";
import type { Stores } from "../stores";

const MIGRATIONS: Record<(typeof SERVICE_SCHEMAS)[number], string> = {
  gateway: GATEWAY_MIGRATIONS_DIR,
  // After the gateway: its first migration brings the gateway's earlier uptime counts along.
  console: CONSOLE_MIGRATIONS_DIR,
  routing: ROUTING_MIGRATIONS_DIR,
  ledger: LEDGER_MIGRATIONS_DIR,
  activity: ACTIVITY_MIGRATIONS_DIR,
  reports: REPORTS_MIGRATIONS_DIR,
  alerts: ALERTS_MIGRATIONS_DIR,
  broadcast: BROADCAST_MIGRATIONS_DIR,
  runaway: RUNAWAY_MIGRATIONS_DIR,
};

/**
 * `migrate [--create-roles]`: as the schemas' owner (DATABASE_URL), creates each service's schema
 * if missing and applies its migrations; then, on Postgres, grants each service's login role
 * (`<ROUTER_DB_ROLE_PREFIX><service>`) what serving needs in its own schema and nothing else, and
 * sets its password from ROUTER_DB_PASSWORD_<SERVICE> when given. `--create-roles` also creates a
 * missing role (the owner then needs CREATEROLE); without it a missing role is reported, for
 * operators who provision roles themselves. One JSON line per schema.
 */
export async function runMigrate(stores: Stores, config: CliConfig, opts: { createRoles: boolean }): Promise<number> {
  if (opts.createRoles && stores.isEmbedded) {
    process.stderr.write("--create-roles: needs DATABASE_URL (Postgres); the embedded PGlite store has no roles, its services migrate in process\n");
    return 2;
  }
  for (const [schema, dir] of Object.entries(MIGRATIONS) as Array<[keyof typeof MIGRATIONS, string]>) {
    const db = await stores.open(schema);
    const { applied, repeated } = await migrate(db, dir);
    if (stores.isEmbedded) {
      process.stdout.write(`${JSON.stringify({ schema, applied, repeated })}\n`);
      continue;
    }
    const role = serviceRoleName(schema, config.ROUTER_DB_ROLE_PREFIX);
    const password = config[`ROUTER_DB_PASSWORD_${schema.toUpperCase() as Uppercase<typeof schema>}`];
    const outcome = await ensureServiceRole(db, { role, create: opts.createRoles, password });
    const passwordSet = outcome !== "missing" && password !== undefined;
    process.stdout.write(`${JSON.stringify({ schema, applied, repeated, role, role_status: outcome, password_set: passwordSet })}\n`);
  }
  return 0;
}
