import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { LoadingCache, type LoadingCacheStats } from "@router/loading-cache";
import { isCloudProvider, openedCloudCredential, type CloudCredential } from "@router/providers";
import type { CredentialDirectory } from "../console/console-port";
import type { CredentialSource, DispatchCredential } from "./dispatch-credential";
import { filterAllows } from "./model-filter";
import { providerCredentialContext, type ProviderCredentialSealer } from "@router/sealing";

export interface CredentialSourceOptions {
  /** How long decrypted credentials are reused before the console is asked again. */
  cacheTtlMs?: number;
  /** How often recorded uses are written back. */
  flushIntervalMs?: number;
}


/**
 * The chat path's view of provider credentials: the console keeps them (sealed); this asks it for an
 * organisation's enabled ones on a cache miss, opens them with the master key, and keeps them a few
 * seconds per organisation (this instance drops its entry at once when it forwards a change), with
 * `last_used_at` sent back in batches off the request path.
 */
export class StoredCredentialSource implements CredentialSource {
  private readonly cache: LoadingCache<DispatchCredential[]>;
  private pendingUses = new Map<string, Date>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly deps: { directory: CredentialDirectory; sealer: ProviderCredentialSealer; clock: Clock; log: Logger },
    opts: CredentialSourceOptions = {},
  ) {
    this.cache = new LoadingCache((orgId) => this.load(orgId), deps.clock, { ttlMs: opts.cacheTtlMs ?? 5_000 });
    // `flush` never rejects: a failed write is logged and its uses kept for the next one.
    this.timer = setInterval(() => void this.flush(), opts.flushIntervalMs ?? 5_000);
    this.timer.unref();
  }

  enabledFor(orgId: string): Promise<DispatchCredential[]> {
    return this.cache.get(orgId);
  }

  allows(credential: DispatchCredential, modelId: string): boolean {
    return filterAllows(credential.modelFilter, modelId);
  }

  markUsed(credentialId: string, at: Date): void {
    const seen = this.pendingUses.get(credentialId);
    if (!seen || seen < at) this.pendingUses.set(credentialId, at);
  }

  /** Hit, miss and size counters of the per-organisation cache (operator diagnostics). */
  stats(): LoadingCacheStats {
    return this.cache.stats();
  }

  /** Drops the organisation's cached credentials; called by this instance on every change. */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  /** Writes recorded uses now. Failures are logged and the uses kept for the next flush. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pendingUses.size === 0) return Promise.resolve();
    const batch = this.pendingUses;
    this.pendingUses = new Map();
    this.flushing = this.deps.directory
      .recordUses(batch)
      .catch((err: unknown) => {
        this.deps.log.warn({ err, credentials: batch.size }, "gateway.provider_credential.last_used_failed");
        for (const [id, at] of batch) this.markUsed(id, at);
      })
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async load(orgId: string): Promise<DispatchCredential[]> {
    const rows = await this.deps.directory.enabledSealed(orgId);
    const out: DispatchCredential[] = [];
    for (const row of rows) {
      let apiKey: string;
      let cloud: CloudCredential | null = null;
      try {
        apiKey = this.deps.sealer.open(row.sealed, providerCredentialContext(orgId, row.id));
        if (isCloudProvider(row.providerSlug)) {
          cloud = openedCloudCredential(row.providerSlug, apiKey);
          apiKey = "";
        }
      } catch (err) {
        // A row sealed under another master key (or altered) cannot serve; the others still can.
        this.deps.log.error({ err, credentialId: row.id, orgId }, "gateway.provider_credential.open_failed");
        continue;
      }
      out.push({
        id: row.id,
        providerSlug: row.providerSlug,
        apiKey,
        cloud,
        tier: row.tier,
        priority: row.priority,
        fallbackPolicy: row.fallbackPolicy,
        modelFilter: row.modelFilter,
      });
    }
    return out;
  }
}
