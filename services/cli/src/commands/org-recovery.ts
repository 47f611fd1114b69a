import { resolveSecrets } from "@router/config";
import { CONSOLE_MIGRATIONS_DIR, listOrganisations, mintManagementKey } from "@router/console";
import { systemClock } from "@router/money";
import type { CliConfig } from "../config";
import type { Stores } from "../stores";

/** `org list`: one JSON line per organisation, oldest first; no secrets. */
export async function runOrgList(stores: Stores): Promise<number> {
  const db = await stores.openMigrated("console", CONSOLE_MIGRATIONS_DIR);
  for (const org of await listOrganisations(db)) {
    process.stdout.write(
      `${JSON.stringify({
        org_id: org.id,
        name: org.name,
        slug: org.slug,
        operator: org.operator,
        created_at: org.createdAt.toISOString(),
        members: org.members,
        active_management_keys: org.activeManagementKeys,
      })}\n`,
    );
  }
  return 0;
}

const ORG_ID = /^org_[0-9A-Za-z]{1,64}$/;

/** `key create --org <id> [--name <n>]`: a new management key for an existing organisation, printed once. */
export async function runKeyCreate(
  stores: Stores,
  config: CliConfig,
  opts: { org: string | undefined; name: string | undefined },
): Promise<number> {
  if (!opts.org || !ORG_ID.test(opts.org)) {
    process.stderr.write("--org: required, an organisation id (org_...); `org list` shows them\n");
    return 2;
  }
  const name = opts.name?.trim() || "recovery management key";
  if (name.length > 80) {
    process.stderr.write("--name: at most 80 characters\n");
    return 2;
  }
  const pepper =
    process.env.ROUTER_KEY_PEPPER ??
    resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: stores.isEmbedded, names: ["ROUTER_KEY_PEPPER"] }).secrets.ROUTER_KEY_PEPPER;
  const db = await stores.openMigrated("console", CONSOLE_MIGRATIONS_DIR);
  const minted = await mintManagementKey(db, opts.org, name, pepper, systemClock);
  if (!minted) {
    process.stderr.write(`--org: no organisation ${opts.org}; \`org list\` shows them\n`);
    return 2;
  }
  process.stdout.write(`${JSON.stringify({ org_id: opts.org, hash: minted.hash, management_key: minted.key })}\n`);
  process.stderr.write("The management key is shown once; store it now. Revoke a lost one with DELETE /v1/keys/{hash}.\n");
  return 0;
}
