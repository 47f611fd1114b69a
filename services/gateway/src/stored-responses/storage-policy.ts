import { LoadingCache } from "@router/loading-cache";
import type { Clock } from "@router/money";
import type { Caller } from "../auth/caller";
import type { LoggingDirectory } from "../console/console-port";
import type { AccountPrivacy } from "./account-privacy";

/** Why a response may not be kept, as the 400 for an explicit `store: true` names it. */
export interface StorageRefusal {
  /** The setting that forbids it, e.g. `logging.key_exclude`. */
  policy: string;
  message: string;
  /** `unavailable` when the policy could not be read (a 503 for an explicit `store: true`); otherwise a 400. */
  code: "invalid_request" | "unavailable";
}

/**
 * Whether a caller's answer may be kept as a stored response. Three things forbid it: the request
 * asking for zero data retention (`provider.zdr: true`: Router then keeps nothing either), the
 * organisation's account privacy policy demanding it (`zdr`, read from routing: account-privacy.ts;
 * unreadable counts as forbidding), and the organisation's logging settings listing the key in
 * `key_exclude` (content of that key's traffic is never recorded). Both are read through
 * 10-second caches, like the auth cache: a change binds every replica within that time.
 */
export class StoragePolicy {
  /** Each organisation's excluded keys, as the console's logging settings list them. */
  private readonly excluded: LoadingCache<string[]>;

  constructor(private readonly deps: { logging: LoggingDirectory; clock: Clock; cacheTtlMs?: number; privacy?: AccountPrivacy }) {
    this.excluded = new LoadingCache((orgId) => deps.logging.excludedKeys(orgId), deps.clock, { ttlMs: deps.cacheTtlMs ?? 10_000 });
  }

  /** After a logging-settings write this gateway forwarded: the next request reads them again. */
  loggingChanged(orgId: string): void {
    this.excluded.invalidate(orgId);
  }

  async refusal(caller: Caller, requestZdr: boolean): Promise<StorageRefusal | null> {
    if (requestZdr) {
      return { policy: "provider.zdr", code: "invalid_request", message: "this request asks for zero data retention (provider.zdr), so Router keeps no response" };
    }
    // Unreadable settings (the console did not answer) count as forbidding, as an unreadable privacy policy does.
    const [excluded, accountZdr] = await Promise.all([
      this.excluded.get(caller.orgId).catch(() => null),
      this.deps.privacy?.zdr(caller.orgId) ?? "not_required",
    ]);
    if (accountZdr === "required") {
      return {
        policy: "privacy.zdr",
        code: "invalid_request",
        message: "the organisation's privacy policy requires zero data retention (zdr), so Router keeps no response",
      };
    }
    if (accountZdr === "unknown") {
      return { policy: "privacy", code: "unavailable", message: "the organisation's privacy policy could not be read, so Router keeps no response for now" };
    }
    if (excluded === null) {
      return { policy: "logging", code: "unavailable", message: "the organisation's logging settings could not be read, so Router keeps no response for now" };
    }
    if (excluded.includes(caller.key.hash)) {
      return {
        policy: "logging.key_exclude",
        code: "invalid_request",
        message: "the organisation's logging settings exclude this key (key_exclude), so Router keeps no response of its traffic",
      };
    }
    return null;
  }
}
