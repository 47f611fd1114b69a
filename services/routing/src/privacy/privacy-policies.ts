import type { EvictedCacheOptions } from "../cache/replica-eviction";
import { ReplicaEviction } from "../cache/replica-eviction";
import { NO_POLICY, type PrivacyPolicy } from "./privacy-policy";
import { loadPolicies, loadPolicy } from "./privacy-store";

/** Redis channel on which a replica that changed an organisation's policy tells the others. */
export const PRIVACY_CHANGED_CHANNEL = "router:routing:privacy-changed";

/**
 * Every organisation's privacy policy in memory (one small row per organisation that set one),
 * loaded before Plan serves, so Plan never waits on the database for it and never routes without a
 * policy that exists. A write re-reads the organisation here and, through Redis, on every replica;
 * the whole table is re-read every `refreshMs` (default 5 s) to catch a missed message.
 */
export class PrivacyPolicies {
  private policies = new Map<string, PrivacyPolicy>();
  private readonly eviction: ReplicaEviction;
  private readonly timer: NodeJS.Timeout;

  private constructor(private readonly opts: EvictedCacheOptions) {
    this.eviction = new ReplicaEviction(PRIVACY_CHANGED_CHANNEL, (orgId) => void this.reread(orgId), opts.log, opts.redis);
    this.timer = setInterval(() => void this.reload(), opts.refreshMs ?? 5_000);
    this.timer.unref();
  }

  static async open(opts: EvictedCacheOptions): Promise<PrivacyPolicies> {
    const policies = new PrivacyPolicies(opts);
    try {
      policies.policies = await loadPolicies(opts.db);
    } catch (err) {
      policies.close();
      throw err;
    }
    return policies;
  }

  get(orgId: string): PrivacyPolicy {
    return this.policies.get(orgId) ?? NO_POLICY;
  }

  /** Called after a write: the new policy here at once, and on every replica. */
  async changed(orgId: string, policy: PrivacyPolicy): Promise<void> {
    this.policies.set(orgId, policy);
    await this.eviction.evict(orgId);
  }

  close(): void {
    clearInterval(this.timer);
    this.eviction.close();
  }

  private async reread(orgId: string): Promise<void> {
    try {
      const policy = await loadPolicy(this.opts.db, orgId);
      if (policy) this.policies.set(orgId, policy);
      else this.policies.delete(orgId);
    } catch (err) {
      this.opts.log.warn({ err, orgId }, "routing.privacy.load_failed");
    }
  }

  private async reload(): Promise<void> {
    try {
      this.policies = await loadPolicies(this.opts.db);
    } catch (err) {
      // Keep serving what is held: a policy never disappears because the database is away.
      this.opts.log.warn({ err }, "routing.privacy.reload_failed");
    }
  }
}
