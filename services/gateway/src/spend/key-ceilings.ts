import { ledger, type routing } from "@router/proto";
import type { WindowKind } from "@router/money";
import type { CallerKey } from "../auth/caller";

const WINDOWS: Record<WindowKind, ledger.Window> = {
  daily: ledger.Window.WINDOW_DAILY,
  weekly: ledger.Window.WINDOW_WEEKLY,
  monthly: ledger.Window.WINDOW_MONTHLY,
  lifetime: ledger.Window.WINDOW_LIFETIME,
};

/** The key's own ceiling as the ledger takes it; none when the key has no limit. */
export function keyCeilings(key: CallerKey): ledger.Ceiling[] {
  if (key.limitNanos === null) return [];
  return [
    {
      subjectKind: "key",
      subjectId: key.hash,
      limitNanodollars: key.limitNanos,
      window: WINDOWS[key.limitReset ?? "lifetime"],
      mode: key.limitMode === "soft" ? ledger.LimitMode.LIMIT_MODE_SOFT : ledger.LimitMode.LIMIT_MODE_HARD,
      includeByok: key.includeByokInLimit,
      // Carried into the ledger's threshold events (alerts name the key).
      subjectName: key.name ?? "",
    },
  ];
}

/**
 * The budgets of the guardrails that apply to the key (Plan names them), each evaluated per key:
 * a hard ceiling on its own counter for that guardrail and this key, so two guardrails with
 * different BYOK rules never share a count. Named after the key's ceiling in the ledger's
 * refusal order.
 */
export function guardrailCeilings(budgets: readonly routing.GuardrailBudget[], key: CallerKey): ledger.Ceiling[] {
  return budgets.map((b) => ({
    subjectKind: "guardrail",
    subjectId: `${b.guardrailId}/${key.hash}`,
    limitNanodollars: b.limitNanodollars,
    window: WINDOWS[b.window as WindowKind] ?? ledger.Window.WINDOW_LIFETIME,
    mode: ledger.LimitMode.LIMIT_MODE_HARD,
    includeByok: b.includeByok,
    subjectName: "",
  }));
}
