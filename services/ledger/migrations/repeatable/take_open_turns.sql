-- Leased turns of several runs taken in one statement: OpenTurns (src/runs/open-turns.ts) gathers
-- the turns that arrive while a statement of turns is in flight and takes them here together, one
-- statement and one commit for all of them. Item i is a turn of run p_run_ids[i] (no run twice in
-- a call) for request p_request_ids[i]. It is taken as takeOpenTurn (src/runs/run-store.ts) takes
-- one: when the organisation's run is open and short of its budget and of its turn and tool-call
-- limits, and the spend lease p_lease_hold_ids[i] is still held; then the worst case is reserved on
-- the run and the turn inserted as its next. A request that is already a turn is not taken again.
-- Answers the request ids of the turns taken; the caller decides the others again, one by one.
--
-- Locks: the runs in id order first, as settle_run_turns does, so no two writers wait in a cycle.
-- A run another writer holds locked (a settlement, a close, a turn decided under lock) is skipped,
-- not waited for: the statements of turns go one at a time, and one run must not hold up the
-- turns of every other. Its turn is not taken, and the caller decides it on its own.
CREATE OR REPLACE FUNCTION take_open_turns(
  p_run_ids text[],
  p_request_ids text[],
  p_org_ids text[],
  p_lease_hold_ids text[],
  p_reserved bigint[],
  p_admitted_at timestamptz[],
  p_expires_at timestamptz[]
)
RETURNS SETOF text
LANGUAGE plpgsql
AS $$
DECLARE
  v_locked text[];
BEGIN
  SELECT array_agg(l.run_id) INTO v_locked
  FROM (SELECT run_id FROM runs WHERE run_id = ANY (p_run_ids) ORDER BY run_id FOR UPDATE SKIP LOCKED) AS l;
  RETURN QUERY
  WITH taken AS (
    UPDATE runs r SET reserved_nanodollars = r.reserved_nanodollars + w.reserved, turns_used = r.turns_used + 1,
      updated_at = w.admitted_at
    FROM unnest(p_run_ids, p_request_ids, p_org_ids, p_lease_hold_ids, p_reserved, p_admitted_at, p_expires_at)
      AS w(run_id, request_id, org_id, lease_hold_id, reserved, admitted_at, expires_at)
    WHERE r.run_id = w.run_id AND r.run_id = ANY (v_locked) AND r.org_id = w.org_id AND r.status = 'open'
      AND r.spent_nanodollars + r.reserved_nanodollars < r.budget_nanodollars
      AND (r.max_turns IS NULL OR r.turns_used < r.max_turns)
      AND (r.max_tool_calls IS NULL OR r.tool_calls_used < r.max_tool_calls)
      AND EXISTS (SELECT 1 FROM holds h WHERE h.hold_id = w.lease_hold_id AND h.org_id = w.org_id AND h.is_lease AND h.state = 'held')
      AND NOT EXISTS (SELECT 1 FROM run_turns t WHERE t.request_id = w.request_id)
    RETURNING r.run_id, r.turns_used, w.request_id, w.reserved, w.admitted_at, w.expires_at
  )
  INSERT INTO run_turns (request_id, run_id, turn, state, reserved_nanodollars, admitted_at, expires_at)
  SELECT taken.request_id, taken.run_id, taken.turns_used, 'admitted', taken.reserved, taken.admitted_at, taken.expires_at
  FROM taken
  RETURNING run_turns.request_id;
END;
$$;
