import { join } from "node:path";
import Redis from "ioredis";
import type { EventBus, Subscription } from "@router/bus";
import { prepareSchema, type Db } from "@router/db";
import { InProcessServer, startGrpcServer } from "@router/grpc-kit";
import { createHttpApp, finishApp, listen, metricsRoute, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { routing } from "@router/proto";
import { CatalogCache } from "./catalog/catalog-cache";
import { BUNDLED_CATALOG_FILE, readCatalogFile } from "./catalog/catalog-file";
import { catalogRoutes } from "./catalog/catalog-routes";
import { catalogRevision } from "./catalog/catalog-store";
import { importCatalog } from "./catalog/import";
import { DefaultsCache } from "./defaults/defaults-cache";
import { defaultsRoutes } from "./defaults/defaults-routes";
import { GuardrailCache } from "./guardrails/guardrail-cache";
import { guardrailRoutes } from "./guardrails/guardrail-routes";
import { HealthCache } from "./health/health-cache";
import { diagnosticsRoute } from "./diagnostics/diagnostics-route";
import { subscribeEndpointHealth } from "./health/health-consumer";
import { RoutingMetrics } from "./metrics";
import { PrivacyPolicies } from "./privacy/privacy-policies";
import { privacyRoutes } from "./privacy/privacy-routes";
import { routingGrpcService } from "./plan/plan-service";
import { PresetCache } from "./presets/preset-cache";
import { presetRoutes } from "./presets/preset-routes";
import { MAX_PIN_IDLE_MS, MemoryPinStore, RedisPinStore, type PinStore } from "./sticky/pin-store";

export { importCatalog, type ImportResult } from "./catalog/import";
export { BUNDLED_CATALOG_FILE } from "./catalog/catalog-file";
// For the in-service Plan benchmark (bench/src/plan.ts): the pure computation and what it reads.
export { plan } from "./plan/plan";
export { CatalogSnapshot } from "./catalog/catalog-snapshot";
export { HealthSnapshot } from "./health/health-snapshot";
export { MemoryPinStore } from "./sticky/pin-store";
export { stickyKeyOf } from "./sticky/sticky-key";
export { applyPreset } from "./presets/preset-merge";
export { routingGuardrail } from "./guardrails/guardrail-stages";

/** This service's SQL migrations (schema `routing`). */
export const ROUTING_MIGRATIONS_DIR = join(__dirname, "..", "migrations");
export const ROUTING_SCHEMA = "routing";

export interface RoutingDeps {
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  /** The Node process metrics in this registry (default true); the one-process runner leaves them to the gateway. */
  defaultMetrics?: boolean;
  /** A Db on the `routing` schema. Owned by the caller, which closes it. */
  db: Db;
  log: Logger;
  clock: Clock;
  httpPort: number;
  /**
   * The RoutingService's port (0 picks a free one), or "in-process": no gRPC listener, the service is
   * called only through `RunningRouting.inProcess` (the one-process runner).
   */
  grpcPort: number | "in-process";
  host?: string;
  /** Catalog imported on first start when the catalog is empty; defaults to the bundled file. */
  catalogFile?: string;
  /** Base URL overrides by provider slug (`ROUTER_PROVIDER_<SLUG>_BASE_URL`). */
  providerBaseUrls?: Record<string, string>;
  /** How often another process's import is looked for; default 30 s. */
  catalogMaxAgeMs?: number;
  /**
   * The event bus. When given, routing consumes `router.request.completed.v1` (group `routing`)
   * into endpoint health; without it, health is only read (another replica may be consuming).
   * Owned by the caller, which closes it.
   */
  bus?: EventBus;
  /** How often the in-memory endpoint health is rebuilt; default 5 s. */
  healthRefreshMs?: number;
  /** How often health older than 24 h is pruned; default 10 min. */
  healthPruneEveryMs?: number;
  /**
   * The edge's public keys (`ROUTER_IDENTITY_PUBLIC_KEYS`): verify the identity the gateway signs and forwards. Without
   * it the management routes (routing defaults) are not mounted; the catalog routes and Plan are.
   */
  identityKeys?: IdentityPublicKeys;
  /** How often an organisation's routing defaults are re-read while Plan uses them; default 5 s. */
  defaultsRefreshMs?: number;
  /**
   * `REDIS_URL`. With it, sticky pins live in Redis (shared by every routing replica) and a preset
   * write evicts the preset on every replica through pub/sub; without it, both stay in this process.
   */
  redisUrl?: string;
  /** Prefix of the sticky pins' Redis keys; default `router:sticky:`. */
  stickyKeyPrefix?: string;
  /** How long a sticky key's pins outlive its last use; default and most one hour. */
  stickyIdleTtlMs?: number;
  /** How often a preset or guardrail set in use is re-read in the background (a missed eviction's bound); default 5 s. */
  presetRefreshMs?: number;
}

export interface RunningRouting {
  httpPort: number;
  /** Set unless `grpcPort` was "in-process". */
  grpcPort?: number;
  /**
   * A RoutingService client for callers in this process: the same handlers and message encoding as
   * the gRPC server, without a socket (see InProcessServer).
   */
  inProcess: routing.RoutingServiceClient;
  close(): Promise<void>;
}

export async function migrateRouting(db: Db, opts: { migrateOnStart: boolean } = { migrateOnStart: true }): Promise<string[]> {
  return (await prepareSchema(db, ROUTING_MIGRATIONS_DIR, opts)).applied;
}

/**
 * Runs migrations, imports the catalog file when the catalog has never been imported, loads the
 * catalog and endpoint health into memory, subscribes to completed requests when a bus is given and
 * starts the HTTP routes (catalog; routing defaults and presets when given the internal secret) and the gRPC
 * RoutingService.
 */
export function startRouting(deps: RoutingDeps & { grpcPort: number }): Promise<RunningRouting & { grpcPort: number }>;
export function startRouting(deps: RoutingDeps): Promise<RunningRouting>;
export async function startRouting(deps: RoutingDeps): Promise<RunningRouting> {
  const { db, log, clock } = deps;
  await migrateRouting(db, { migrateOnStart: deps.migrateOnStart ?? true });
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
  const health = await HealthCache.open({
    db,
    clock,
    log,
    refreshMs: deps.healthRefreshMs,
    pruneEveryMs: deps.healthPruneEveryMs,
  });

  // Pins and preset evictions give up quickly: a pin is a preference, and a missed eviction is
  // caught by the presets' background refresh.
  const redis = deps.redisUrl ? new Redis(deps.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 500 }) : undefined;
  redis?.on("error", (err: unknown) => log.warn({ err }, "routing.redis.error"));
  const idleTtlMs = Math.min(deps.stickyIdleTtlMs ?? MAX_PIN_IDLE_MS, MAX_PIN_IDLE_MS);
  const pins: PinStore = redis
    ? new RedisPinStore(redis, { idleTtlMs, keyPrefix: deps.stickyKeyPrefix })
    : new MemoryPinStore(clock, { idleTtlMs });
  const defaults = new DefaultsCache({ db, clock, log, redis, refreshMs: deps.defaultsRefreshMs });
  const presets = new PresetCache({ db, clock, log, redis, refreshMs: deps.presetRefreshMs });
  const guardrails = new GuardrailCache({ db, clock, log, redis, refreshMs: deps.presetRefreshMs });
  const privacy = await PrivacyPolicies.open({ db, clock, log, redis, refreshMs: deps.presetRefreshMs });

  const metrics = new RoutingMetrics({ defaultMetrics: deps.defaultMetrics });
  const app = createHttpApp({ log });
  // The HTTP port is internal; the gateway forwards only catalog and management routes to it.
  app.get("/metrics", metricsRoute(metrics.registry));
  app.get("/health", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.use(catalogRoutes(cache, health));
  if (deps.identityKeys) {
    app.use(defaultsRoutes({ db, catalog: cache, defaults, clock, identityKeys: deps.identityKeys }));
    app.use(presetRoutes({ db, catalog: cache, presets, clock, identityKeys: deps.identityKeys }));
    app.use(diagnosticsRoute({ health, identityKeys: deps.identityKeys, caches: { guardrails: () => guardrails.stats(), catalog: () => cache.stats() } }));
    app.use(guardrailRoutes({ db, catalog: cache, guardrails, clock, identityKeys: deps.identityKeys }));
    app.use(privacyRoutes({ db, catalog: cache, policies: privacy, clock, identityKeys: deps.identityKeys }));
  }
  finishApp(app, log);

  let http: Awaited<ReturnType<typeof listen>> | undefined;
  let grpc: Awaited<ReturnType<typeof startGrpcServer>> | undefined;
  let inProcess: InProcessServer | undefined;
  let subscription: Subscription | undefined;
  const close = async () => {
    await subscription?.close();
    await Promise.all([http?.close(), grpc?.close(), inProcess?.close()]);
    cache.close();
    await health.close();
    await defaults.close();
    presets.close();
    guardrails.close();
    privacy.close();
    pins.close();
  };
  try {
    http = await listen(app, deps.httpPort, deps.host);
    const sources = { catalog: cache, health, defaults, presets, guardrails, privacy, pins, log };
    const services = [routingGrpcService(sources, log, metrics)];
    inProcess = new InProcessServer(services);
    if (deps.grpcPort !== "in-process") grpc = await startGrpcServer(services, { port: deps.grpcPort, host: deps.host, log });
    if (deps.bus) subscription = await subscribeEndpointHealth(deps.bus, { db, log, clock, metrics, pins });
  } catch (err) {
    await close();
    throw err;
  }
  log.info({ httpPort: http.port, grpcPort: grpc?.port ?? "in-process", consuming: subscription !== undefined }, "routing.started");
  return { httpPort: http.port, grpcPort: grpc?.port, inProcess: inProcess.client(routing.RoutingServiceClient), close };
}
