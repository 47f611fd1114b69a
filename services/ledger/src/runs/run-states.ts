import { ledger } from "@router/management-api";

/** A run's status (the API's enum values). */
export const RUN_STATUSES = ledger.RUN_STATUSES;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * What can happen to a run: settlement finds its spend at the budget (`exhaust`) or a detector
 * tripped (`pause`); a caller resumes it or closes it as completed or cancelled.
 */
export type RunEvent = "exhaust" | "pause" | "resume" | "complete" | "cancel";

/**
 * The one table of run transitions: every move a run can make, and no other. A pair missing here is
 * refused (a close of a closed run, a resume of a run that is not paused, a settlement on a paused
 * or closed run that would exhaust or pause it again).
 */
export const RUN_TRANSITIONS: ReadonlyArray<{ from: RunStatus; on: RunEvent; to: RunStatus }> = [
  { from: "open", on: "exhaust", to: "exhausted" },
  { from: "open", on: "pause", to: "paused" },
  { from: "paused", on: "resume", to: "open" },
  { from: "open", on: "complete", to: "completed" },
  { from: "open", on: "cancel", to: "cancelled" },
  { from: "paused", on: "complete", to: "completed" },
  { from: "paused", on: "cancel", to: "cancelled" },
];

/** The status `event` moves a run in `from` to; null when the table has no such move. */
export function nextStatus(from: RunStatus, event: RunEvent): RunStatus | null {
  return RUN_TRANSITIONS.find((t) => t.from === from && t.on === event)?.to ?? null;
}

/** A closed run takes no turn and cannot be closed again. */
export function isClosed(status: RunStatus): boolean {
  return status === "completed" || status === "exhausted" || status === "cancelled";
}
