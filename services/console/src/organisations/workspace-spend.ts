import { callUnary } from "@router/grpc-kit";
import { nanosString, toUsd, type WindowKind } from "@router/money";
import { ledger } from "@router/proto";

/** What a workspace row shows of the ledger's: spend this month and budgets (Workspace, in the service README). */
export interface WorkspaceSpend {
  /** USD, list price (BYOK included): this UTC month's spend plus requests in flight. */
  spend_this_month: number;
  budgets: Array<{ interval: WindowKind; limit_nanodollars: string | null; include_byok: boolean }>;
}

const NOTHING: WorkspaceSpend = { spend_this_month: 0, budgets: [] };

const WINDOWS: Partial<Record<ledger.Window, WindowKind>> = {
  [ledger.Window.WINDOW_DAILY]: "daily",
  [ledger.Window.WINDOW_WEEKLY]: "weekly",
  [ledger.Window.WINDOW_MONTHLY]: "monthly",
  [ledger.Window.WINDOW_LIFETIME]: "lifetime",
};

/**
 * Each workspace's spend this month and budgets, from one ledger `WorkspaceSpend` call (the ledger
 * owns both); a ledger that does not answer is a 503 like any other ledger call.
 */
export async function workspaceSpend(
  client: ledger.LedgerServiceClient,
  orgId: string,
  workspaceIds: string[],
  opts: { deadlineMs: number },
): Promise<(id: string) => WorkspaceSpend> {
  if (workspaceIds.length === 0) return () => NOTHING;
  const res = await callUnary(client, client.workspaceSpend.bind(client), { orgId, workspaceIds }, {
    deadlineMs: opts.deadlineMs,
    service: "ledger",
  });
  const byId = new Map(
    res.workspaces.map((w): [string, WorkspaceSpend] => [
      w.workspaceId,
      {
        spend_this_month: toUsd(w.spendThisMonthNanodollars),
        budgets: w.budgets.flatMap((b) => {
          const interval = WINDOWS[b.window];
          return interval ? [{ interval, limit_nanodollars: nanosString(b.limitNanodollars), include_byok: b.includeByok }] : [];
        }),
      },
    ]),
  );
  return (id) => byId.get(id) ?? NOTHING;
}
