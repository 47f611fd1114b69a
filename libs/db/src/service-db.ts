import { join } from "node:path";
import type { Db } from "./db";
import { EmbeddedPostgres } from "./pglite";
import { createPostgresDb } from "./postgres";

export interface ServiceDb {
  db: Db;
  /** "postgres" or a sentence naming the embedded directory, for the start-up log. */
  describe: string;
  close(): Promise<void>;
}

/**
 * A standalone service's store: Postgres when `databaseUrl` is set, otherwise its own embedded
 * PGlite directory `<dataDir>/pg-<schema>` (PGlite allows one process per directory, so services
 * run as separate processes never share one).
 */
export async function openServiceDb(opts: { databaseUrl?: string; dataDir: string; schema: string }): Promise<ServiceDb> {
  if (opts.databaseUrl) {
    const db = createPostgresDb({ url: opts.databaseUrl, schema: opts.schema, applicationName: `router-${opts.schema}` });
    return { db, describe: "postgres (DATABASE_URL)", close: () => db.close() };
  }
  const dir = join(opts.dataDir, `pg-${opts.schema}`);
  const embedded = await EmbeddedPostgres.open(dir);
  return { db: embedded.forSchema(opts.schema), describe: `embedded PGlite in ${dir}`, close: () => embedded.close() };
}
