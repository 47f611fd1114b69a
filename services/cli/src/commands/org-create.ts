import { writeFile } from "node:fs/promises";
import { resolveSecrets } from "@router/config";
import { CONSOLE_MIGRATIONS_DIR, createOrganisation, operatorOrganisationExists } from "@router/console";
import { systemClock } from "@router/money";
import type { CliConfig } from "../config";
import { inCluster, SecretWriter } from "../kubernetes-secret";
import type { Stores } from "../stores";

export interface OrgCreateOptions {
  name: string | undefined;
  operator: boolean;
  /** Do nothing (exit 0) when an operator organisation exists already: a bootstrap Job may run again. */
  ifMissing: boolean;
  /** Write the key here (mode 0600, never overwritten) instead of stdout. */
  keyFile: string | undefined;
  /** Write the key into this Kubernetes Secret of the pod's namespace instead of stdout. */
  keySecret: string | undefined;
}

/**
 * `org create --name <n> [--operator] [--if-missing] [--key-file <path> | --key-secret <name>]`.
 * The management key is handed over once: on stdout (an operator's terminal), or, where stdout is
 * a log stream (a Kubernetes Job), into a file or a Secret, with only the ids on stdout.
 */
export async function runOrgCreate(stores: Stores, config: CliConfig, opts: OrgCreateOptions): Promise<number> {
  const name = opts.name?.trim();
  if (!name || name.length > 80) {
    process.stderr.write("--name: required, 1 to 80 characters\n");
    return 2;
  }
  if (opts.keyFile !== undefined && opts.keySecret !== undefined) {
    process.stderr.write("--key-file, --key-secret: give one of them\n");
    return 2;
  }
  if (opts.keySecret !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(opts.keySecret)) {
    process.stderr.write("--key-secret: a Kubernetes object name (lower-case letters, digits, '-' and '.')\n");
    return 2;
  }
  if (opts.ifMissing && !opts.operator) {
    process.stderr.write("--if-missing: only with --operator\n");
    return 2;
  }
  // Only the key pepper is needed; the embedded store shares the one generated under ROUTER_DATA_DIR.
  const pepper =
    process.env.ROUTER_KEY_PEPPER ??
    resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: stores.isEmbedded, names: ["ROUTER_KEY_PEPPER"] }).secrets.ROUTER_KEY_PEPPER;
  const db = await stores.openMigrated("console", CONSOLE_MIGRATIONS_DIR);
  if (opts.ifMissing && (await operatorOrganisationExists(db))) {
    process.stdout.write(`${JSON.stringify({ operator_organisation: "exists", created: false })}\n`);
    return 0;
  }
  // Check where the key goes before creating anything: a key with nowhere to go would be lost.
  const secrets = opts.keySecret === undefined ? undefined : new SecretWriter(await inCluster(process.env));
  if (secrets && opts.keySecret && (await secrets.exists(opts.keySecret))) {
    process.stderr.write(`Secret ${opts.keySecret} exists in namespace ${secrets.namespace}: delete it (after saving its key) or name another\n`);
    return 1;
  }
  const org = await createOrganisation(db, { name, operator: opts.operator }, pepper, systemClock);
  const handed = { org_id: org.orgId, workspace_id: org.workspaceId, management_key: org.managementKey };
  const ids = { org_id: org.orgId, workspace_id: org.workspaceId, created: true };
  try {
    if (opts.keyFile !== undefined) {
      await writeFile(opts.keyFile, `${JSON.stringify(handed)}\n`, { mode: 0o600, flag: "wx" });
      process.stdout.write(`${JSON.stringify({ ...ids, key_file: opts.keyFile })}\n`);
    } else if (secrets && opts.keySecret) {
      await secrets.create(opts.keySecret, handed);
      process.stdout.write(`${JSON.stringify({ ...ids, key_secret: `${secrets.namespace}/${opts.keySecret}` })}\n`);
    } else {
      process.stdout.write(`${JSON.stringify(handed)}\n`);
      process.stderr.write("The management key is shown once; store it now.\n");
    }
  } catch (err) {
    // The message names the place, never the key.
    const why = err instanceof Error ? err.message : String(err);
    process.stderr.write(
      `Organisation ${org.orgId} was created but its management key could not be handed over (${why}). ` +
        `Mint a new one from a terminal: router key create --org ${org.orgId}\n`,
    );
    return 1;
  }
  return 0;
}
