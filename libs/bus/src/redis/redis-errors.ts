import { isProgrammingError } from "../failure";

/**
 * What an error met talking to Redis means. `unreachable`: connection trouble, timeouts, and the
 * replies of a Redis that is starting, failing over or out of memory (a retry fixes them);
 * `refused`: Redis refused the command itself (a wrong type, a missing permission); `broken`: the
 * error comes from code (see `isProgrammingError`).
 */
export type RedisFailure = "unreachable" | "refused" | "broken";

// Replies of a Redis that cannot serve now but will: loading its data, running a script, a replica
// without its master, a failover, a full memory.
const TRANSIENT_REPLIES = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM|NOREPLICAS|NOTREADY) /;

export function redisFailureOf(err: unknown): RedisFailure {
  if (isProgrammingError(err)) return "broken";
  if (err instanceof Error && err.name === "ReplyError") return TRANSIENT_REPLIES.test(err.message) ? "unreachable" : "refused";
  return "unreachable";
}
