import { resolveSecrets } from "@router/config";
import { createOrganisation, GATEWAY_MIGRATIONS_DIR } from "@router/gateway";
import { migrate } from "@router/db";
import { systemClock } from "@router/money";
import type { CliConfig } from "../config";
import type { Stores } from "../stores";

/** `org create --name <n> [--operator]`: prints the new organisation's management key once. */
export async function runOrgCreate(
  stores: Stores,
  config: CliConfig,
  opts: { name: string | undefined; operator: boolean },
): Promise<number> {
  const name = opts.name?.trim();
  if (!name || name.length > 80) {
    process.stderr.write("--name: required, 1 to 80 characters\n");
    return 2;
  }
  // Only the key pepper is needed; the embedded store shares the one generated under ROUTER_DATA_DIR.
  const pepper =
    process.env.ROUTER_KEY_PEPPER ??
    resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: stores.isEmbedded }).secrets.ROUTER_KEY_PEPPER;
  const db = await stores.open("gateway");
  await migrate(db, GATEWAY_MIGRATIONS_DIR);
  const org = await createOrganisation(db, { name, operator: opts.operator }, pepper, systemClock);
  process.stdout.write(
    `${JSON.stringify({ org_id: org.orgId, workspace_id: org.workspaceId, management_key: org.managementKey })}\n`,
  );
  process.stderr.write("The management key is shown once; store it now.\n");
  return 0;
}
