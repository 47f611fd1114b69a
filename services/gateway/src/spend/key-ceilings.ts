import { LEDGER_WINDOWS } from "@router/api-keys";
import { ledger, type routing } from "@router/proto";
import type { WindowKind } from "@router/money";
import type { CallerKey } from "../auth/caller";

export { keyCeilings } from "@router/api-keys";

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
    window: LEDGER_WINDOWS[b.window as WindowKind] ?? ledger.Window.WINDOW_LIFETIME,
    mode: ledger.LimitMode.LIMIT_MODE_HARD,
    includeByok: b.includeByok,
    subjectName: "",
  }));
}
