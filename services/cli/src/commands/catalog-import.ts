import { readFileSync } from "node:fs";
import { BUNDLED_CATALOG_FILE, importCatalog, ROUTING_MIGRATIONS_DIR } from "@router/routing";
import { systemClock } from "@router/money";
import type { Stores } from "../stores";

/** `catalog import [<file>]`: validates and upserts the catalog into the routing store. */
export async function runCatalogImport(stores: Stores, file: string | undefined): Promise<number> {
  const path = file ?? BUNDLED_CATALOG_FILE;
  const json: unknown = JSON.parse(readFileSync(path, "utf8"));
  const db = await stores.openMigrated("routing", ROUTING_MIGRATIONS_DIR);
  const summary = await importCatalog(db, json, systemClock);
  // The revision is a bigint; it prints as a decimal string.
  const printable = JSON.stringify({ file: path, ...summary }, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  process.stdout.write(`${printable}\n`);
  return 0;
}
