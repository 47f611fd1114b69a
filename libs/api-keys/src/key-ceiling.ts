import type { WindowKind } from "@router/money";
import type { ApiKey } from "./api-key";
import { ledger } from "@router/proto";

/** What of a key sets its spend ceiling. */
export type KeyLimit = Pick<ApiKey, "hash" | "name" | "limitNanos" | "limitReset" | "limitMode" | "includeByokInLimit">;

export const LEDGER_WINDOWS: Record<WindowKind, ledger.Window> = {
  daily: ledger.Window.WINDOW_DAILY,
  weekly: ledger.Window.WINDOW_WEEKLY,
  monthly: ledger.Window.WINDOW_MONTHLY,
  lifetime: ledger.Window.WINDOW_LIFETIME,
};

/**
 * The key's own ceiling as the ledger takes it; none when the key has no limit. The gateway admits
 * requests against it and the console reports what it has counted, so both name the same counter.
 */
export function keyCeilings(key: KeyLimit): ledger.Ceiling[] {
  if (key.limitNanos === null) return [];
  return [
    {
      subjectKind: "key",
      subjectId: key.hash,
      limitNanodollars: key.limitNanos,
      window: LEDGER_WINDOWS[key.limitReset ?? "lifetime"],
      mode: key.limitMode === "soft" ? ledger.LimitMode.LIMIT_MODE_SOFT : ledger.LimitMode.LIMIT_MODE_HARD,
      includeByok: key.includeByokInLimit,
      // Carried into the ledger's threshold events (alerts name the key).
      subjectName: key.name ?? "",
    },
  ];
}
