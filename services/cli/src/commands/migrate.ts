import { migrate } from "@router/db";
import { ACTIVITY_MIGRATIONS_DIR } from "@router/activity";
import { GATEWAY_MIGRATIONS_DIR } from "@router/gateway";
import { LEDGER_MIGRATIONS_DIR } from "@router/ledger";
import { REPORTS_MIGRATIONS_DIR } from "@router/reports";
import { ROUTING_MIGRATIONS_DIR } from "@router/routing";
import type { Stores } from "../stores";

const SERVICES: Array<[schema: string, dir: string]> = [
  ["gateway", GATEWAY_MIGRATIONS_DIR],
  ["routing", ROUTING_MIGRATIONS_DIR],
  ["ledger", LEDGER_MIGRATIONS_DIR],
  ["activity", ACTIVITY_MIGRATIONS_DIR],
  ["reports", REPORTS_MIGRATIONS_DIR],
];

/** `migrate`: applies each service's migrations to its own schema (services also do this on start). */
export async function runMigrate(stores: Stores): Promise<number> {
  for (const [schema, dir] of SERVICES) {
    const { applied, repeated } = await migrate(await stores.open(schema), dir);
    process.stdout.write(`${JSON.stringify({ schema, applied, repeated })}\n`);
  }
  return 0;
}
