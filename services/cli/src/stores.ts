import { join } from "node:path";
import { createPostgresDb, EmbeddedPostgres, prepareSchema, type Db } from "@router/db";

/**
 * Opens a service's own schema the way that service does: on DATABASE_URL when set, otherwise on
 * the embedded PGlite store under ROUTER_DATA_DIR (which only one process may hold: stop
 * `npm start` before running a CLI command against the embedded store).
 */
export class Stores {
  private embedded: EmbeddedPostgres | null = null;
  private readonly opened: Db[] = [];

  constructor(
    private readonly databaseUrl: string | undefined,
    private readonly dataDir: string,
    /** false (ROUTER_MIGRATE_ON_START): `openMigrated` only checks, as the services do in production. */
    private readonly migrateFirst = true,
  ) {}

  get isEmbedded(): boolean {
    return !this.databaseUrl;
  }

  async open(schema: string): Promise<Db> {
    if (this.databaseUrl) {
      const db = createPostgresDb({ url: this.databaseUrl, schema, max: 2, applicationName: "router-cli" });
      this.opened.push(db);
      return db;
    }
    this.embedded ??= await EmbeddedPostgres.open(join(this.dataDir, "pg"));
    return this.embedded.forSchema(schema);
  }

  /**
   * Opens a service's schema for a command that reads or writes its rows: migrated first (as the
   * service would at its start), or with ROUTER_MIGRATE_ON_START=false checked to be at the latest
   * migration, for a command running as that service's role, which has no DDL rights.
   */
  async openMigrated(schema: string, migrationsDir: string): Promise<Db> {
    const db = await this.open(schema);
    await prepareSchema(db, migrationsDir, { migrateOnStart: this.migrateFirst });
    return db;
  }

  async close(): Promise<void> {
    await Promise.all(this.opened.map((d) => d.close()));
    await this.embedded?.close();
  }
}
