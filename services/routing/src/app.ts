import { join } from "node:path";
import { migrate, type Db } from "@router/db";
import { startGrpcServer } from "@router/grpc-kit";
import { createHttpApp, finishApp, listen } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { CatalogCache } from "./catalog/catalog-cache";
import { BUNDLED_CATALOG_FILE, readCatalogFile } from "./catalog/catalog-file";
import { catalogRoutes } from "./catalog/catalog-routes";
import { catalogRevision } from "./catalog/catalog-store";
import { importCatalog } from "./catalog/import";
import { routingGrpcService } from "./plan/plan-service";

export { importCatalog, type ImportResult } from "./catalog/import";
export { BUNDLED_CATALOG_FILE } from "./catalog/catalog-file";

/** This service's SQL migrations (schema `routing`). */
export const ROUTING_MIGRATIONS_DIR = join(__dirname, "..", "migrations");
export const ROUTING_SCHEMA = "routing";

export interface RoutingDeps {
  /** A Db on the `routing` schema. Owned by the caller, which closes it. */
  db: Db;
  log: Logger;
  clock: Clock;
  httpPort: number;
  grpcPort: number;
  host?: string;
  /** Catalog imported on first start when the catalog is empty; defaults to the bundled file. */
  catalogFile?: string;
  /** Base URL overrides by provider slug (`ROUTER_PROVIDER_<SLUG>_BASE_URL`). */
  providerBaseUrls?: Record<string, string>;
  /** How often another process's import is looked for; default 30 s. */
  catalogMaxAgeMs?: number;
}

export interface RunningRouting {
  httpPort: number;
  grpcPort: number;
  close(): Promise<void>;
}

export async function migrateRouting(db: Db): Promise<string[]> {
  return (await migrate(db, ROUTING_MIGRATIONS_DIR)).applied;
}

/**
 * Runs migrations, imports the catalog file when the catalog has never been imported, loads the
 * catalog into memory and starts the HTTP catalog routes and the gRPC RoutingService.
 */
export async function startRouting(deps: RoutingDeps): Promise<RunningRouting> {
  const { db, log, clock } = deps;
  await migrateRouting(db);
  if ((await catalogRevision(db)) === 0n) {
    const file = deps.catalogFile ?? BUNDLED_CATALOG_FILE;
    const result = await importCatalog(db, readCatalogFile(file), clock);
    log.info({ file, revision: result.revision.toString() }, "routing.catalog.first_import");
  }
  const cache = await CatalogCache.open({
    db,
    clock,
    log,
    providerBaseUrls: deps.providerBaseUrls,
    maxAgeMs: deps.catalogMaxAgeMs,
  });

  const app = createHttpApp({ log });
  app.get("/health", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.use(catalogRoutes(cache));
  finishApp(app, log);

  const http = await listen(app, deps.httpPort, deps.host);
  let grpc: Awaited<ReturnType<typeof startGrpcServer>>;
  try {
    grpc = await startGrpcServer([routingGrpcService(cache, log)], { port: deps.grpcPort, host: deps.host, log });
  } catch (err) {
    await http.close();
    cache.close();
    throw err;
  }
  log.info({ httpPort: http.port, grpcPort: grpc.port }, "routing.started");
  return {
    httpPort: http.port,
    grpcPort: grpc.port,
    async close() {
      cache.close();
      await Promise.all([http.close(), grpc.close()]);
    },
  };
}
