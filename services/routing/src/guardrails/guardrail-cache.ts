import { LoadingCache, type LoadingCacheStats } from "@router/loading-cache";
import { ReplicaEviction, type EvictedCacheOptions } from "../cache/replica-eviction";
import { routingGuardrail, type RoutingGuardrail } from "./guardrail-stages";
import { listGuardrails } from "./guardrail-store";

/** Redis channel on which a replica that changed an organisation's guardrails tells the others. */
export const GUARDRAILS_CHANGED_CHANNEL = "router:routing:guardrails-changed";

/** Who a request is made by, as guardrail assignments name them. */
export interface GuardrailSubject {
  keyHash: string;
  memberUserId: string;
}

/** An organisation's assigned guardrails by subject (`key:<hash>`, `member:<user id>`). */
type Assigned = ReadonlyMap<string, readonly RoutingGuardrail[]>;

const NONE: readonly RoutingGuardrail[] = [];

/**
 * Each organisation's assigned guardrails in memory, read on its first Plan. A write evicts the
 * organisation here and on every replica (Redis pub/sub); a missed eviction is caught by the
 * background refresh. Guardrails restrict, so when an organisation's cannot be read at all `forSubject`
 * answers null and Plan refuses rather than routing unrestricted.
 */
export class GuardrailCache {
  private readonly cache: LoadingCache<Assigned>;
  private readonly eviction: ReplicaEviction;

  constructor(private readonly opts: EvictedCacheOptions) {
    this.cache = new LoadingCache((orgId, previous) => this.read(orgId, previous), opts.clock, {
      ttlMs: opts.ttlMs ?? 60_000,
      refreshAfterMs: opts.refreshMs ?? 5_000,
      maxEntries: 100_000,
    });
    this.eviction = new ReplicaEviction(GUARDRAILS_CHANGED_CHANNEL, (orgId) => this.cache.invalidate(orgId), opts.log, opts.redis);
  }

  /** The guardrails assigned to the key or its member; null when they cannot be read. */
  async forSubject(orgId: string, subject: GuardrailSubject): Promise<readonly RoutingGuardrail[] | null> {
    let assigned: Assigned;
    try {
      assigned = await this.cache.get(orgId);
    } catch {
      return null;
    }
    if (assigned.size === 0) return NONE;
    const byKey = subject.keyHash ? (assigned.get(`key:${subject.keyHash}`) ?? NONE) : NONE;
    const byMember = subject.memberUserId ? (assigned.get(`member:${subject.memberUserId}`) ?? NONE) : NONE;
    if (byMember.length === 0) return byKey;
    if (byKey.length === 0) return byMember;
    return [...new Set([...byKey, ...byMember])];
  }

  /** Hit, miss, stale and size counters (organisations held) for the operator diagnostics. */
  stats(): LoadingCacheStats {
    return this.cache.stats();
  }

  async changed(orgId: string): Promise<void> {
    await this.eviction.evict(orgId);
  }

  close(): void {
    this.eviction.close();
  }

  private async read(orgId: string, previous: Assigned | undefined): Promise<Assigned> {
    try {
      const assigned = new Map<string, RoutingGuardrail[]>();
      for (const g of await listGuardrails(this.opts.db, orgId)) {
        const rule = routingGuardrail(g.id, g);
        for (const a of g.assignments) {
          const subject = `${a.subjectType}:${a.subjectId}`;
          assigned.set(subject, [...(assigned.get(subject) ?? []), rule]);
        }
      }
      return assigned;
    } catch (err) {
      this.opts.log.warn({ err, orgId }, "routing.guardrails.load_failed");
      if (previous !== undefined) return previous;
      throw err;
    }
  }
}
