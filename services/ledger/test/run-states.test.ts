import { nextStatus, RUN_STATUSES, type RunEvent, type RunStatus } from "../src/runs/run-states";

const EVENTS: RunEvent[] = ["exhaust", "pause", "resume", "complete", "cancel"];

// The run state machine as a table: every status against every event, the status it moves to or
// null where the move does not exist. Settlement exhausts or pauses only an open run; only a paused
// run resumes; only an open or paused run closes.
const EXPECTED: Record<RunStatus, Record<RunEvent, RunStatus | null>> = {
  open: { exhaust: "exhausted", pause: "paused", resume: null, complete: "completed", cancel: "cancelled" },
  paused: { exhaust: null, pause: null, resume: "open", complete: "completed", cancel: "cancelled" },
  completed: { exhaust: null, pause: null, resume: null, complete: null, cancel: null },
  exhausted: { exhaust: null, pause: null, resume: null, complete: null, cancel: null },
  cancelled: { exhaust: null, pause: null, resume: null, complete: null, cancel: null },
};

describe("the run state machine", () => {
  const cases = RUN_STATUSES.flatMap((from) => EVENTS.map((on): [RunStatus, RunEvent, RunStatus | null] => [from, on, EXPECTED[from][on]]));

  it.each(cases)("%s on %s moves to %s", (from, on, to) => {
    expect(nextStatus(from, on)).toBe(to);
  });
});
