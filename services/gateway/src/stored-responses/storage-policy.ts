import type { Db } from "@router/db";
import { LoadingCache } from "@router/loading-cache";
import type { Clock } from "@router/money";
import type { Caller } from "../auth/caller";
import { loadLogging, type LoggingSettings } from "../logging-settings/logging-store";

/** Why a response may not be kept, as the 400 for an explicit `store: true` names it. */
export interface StorageRefusal {
  /** The setting that forbids it, e.g. `logging.key_exclude`. */
  policy: string;
  message: string;
}

/**
 * Whether a caller's answer may be kept as a stored response. Two things forbid it: the request
 * asking for zero data retention (`provider.zdr: true`: Router then keeps nothing either), and the
 * organisation's logging settings listing the key in `key_exclude` (content of that key's traffic
 * is never recorded). The settings are read through a 10-second cache, like the auth cache: a
 * change binds every replica within that time.
 */
export class StoragePolicy {
  private readonly logging: LoadingCache<LoggingSettings>;

  constructor(deps: { db: Db; clock: Clock; cacheTtlMs?: number }) {
    this.logging = new LoadingCache((orgId) => loadLogging(deps.db, orgId), deps.clock, { ttlMs: deps.cacheTtlMs ?? 10_000 });
  }

  async refusal(caller: Caller, requestZdr: boolean): Promise<StorageRefusal | null> {
    if (requestZdr) {
      return { policy: "provider.zdr", message: "this request asks for zero data retention (provider.zdr), so Router keeps no response" };
    }
    const logging = await this.logging.get(caller.orgId);
    if (logging.keyExclude.includes(caller.key.hash)) {
      return {
        policy: "logging.key_exclude",
        message: "the organisation's logging settings exclude this key (key_exclude), so Router keeps no response of its traffic",
      };
    }
    return null;
  }
}
