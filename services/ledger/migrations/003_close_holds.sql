-- Settle, Release and expiry for a batch of holds as one autocommit statement (group commit): the
-- ledger queues closings and applies them together, so a hot counter row is locked and written once
-- per batch, at the very end of the call, and released at its commit with no client round trip.
--
-- Closings apply in the order given, so a hold named twice sees the first closing's effect. Leaving
-- 'held' takes the hold's reservation off every counter row it reserved on; settling adds the actual
-- list cost to those rows (the window the hold was admitted in). A hold that expired can still be
-- settled (the spend happened); every other closed hold stays as it is, which makes every closing
-- idempotent. p_to_states[i] is 'settled', 'released' or 'expired'; list and billed costs are set
-- for 'settled' only.
--
-- Locks: every hold of the batch in id order first, then the counter rows in lock order (subject
-- kind, subject id, window kind, window start: `lockOrder` in src/holds/ceilings.ts, which agrees
-- with byte order for the ASCII ids the ledger is sent), the same order on every replica and in the
-- transaction for several ceilings, so no two writers wait on each other in a cycle.
--
-- One row per closing, `item` its 1-based position: outcome 'closed', 'already_closed' or 'not_found'.
CREATE FUNCTION close_holds(
  p_hold_ids text[],
  p_to_states text[],
  p_closed_at timestamptz[],
  p_list_costs bigint[],
  p_billed_costs bigint[]
)
RETURNS TABLE (item integer, outcome text)
LANGUAGE plpgsql
AS $$
DECLARE
  v_state text;
  v_lines jsonb;
  v_unreserve boolean;
  v_settle boolean;
  -- What the batch does to each counter row line by line: [{subject_kind, ..., unreserve, settle}].
  v_deltas jsonb := '[]'::jsonb;
  d record;
BEGIN
  PERFORM 1 FROM holds h WHERE h.hold_id = ANY (p_hold_ids) ORDER BY h.hold_id FOR UPDATE;

  FOR i IN 1 .. coalesce(array_length(p_hold_ids, 1), 0) LOOP
    item := i;
    SELECT h.state, h.lines INTO v_state, v_lines FROM holds h WHERE h.hold_id = p_hold_ids[i];
    IF NOT FOUND THEN
      outcome := 'not_found';
      RETURN NEXT;
      CONTINUE;
    END IF;
    v_unreserve := v_state = 'held';
    v_settle := p_to_states[i] = 'settled' AND v_state IN ('held', 'expired');
    IF NOT v_unreserve AND NOT v_settle THEN
      outcome := 'already_closed';
      RETURN NEXT;
      CONTINUE;
    END IF;

    UPDATE holds h
    SET state = p_to_states[i],
        closed_at = p_closed_at[i],
        list_cost_nanodollars = coalesce(p_list_costs[i], h.list_cost_nanodollars),
        billed_cost_nanodollars = coalesce(p_billed_costs[i], h.billed_cost_nanodollars)
    WHERE h.hold_id = p_hold_ids[i];

    v_deltas := v_deltas || coalesce((
      SELECT jsonb_agg(l.line || jsonb_build_object(
        'unreserve', CASE WHEN v_unreserve THEN (l.line ->> 'amount')::bigint ELSE 0 END,
        'settle', CASE WHEN v_settle THEN p_list_costs[i] ELSE 0 END))
      FROM jsonb_array_elements(v_lines) AS l (line)
    ), '[]'::jsonb);
    outcome := 'closed';
    RETURN NEXT;
  END LOOP;

  FOR d IN
    SELECT x.subject_kind, x.subject_id, x.window_kind, x.window_start,
           sum(x.unreserve)::bigint AS unreserve, sum(x.settle)::bigint AS settle
    FROM jsonb_to_recordset(v_deltas)
      AS x (subject_kind text, subject_id text, window_kind text, window_start timestamptz, unreserve bigint, settle bigint)
    GROUP BY x.subject_kind, x.subject_id, x.window_kind, x.window_start
    ORDER BY x.subject_kind COLLATE "C", x.subject_id COLLATE "C", x.window_kind COLLATE "C", x.window_start
  LOOP
    UPDATE spend_counters sc
    SET reserved_nanodollars = sc.reserved_nanodollars - d.unreserve,
        settled_nanodollars = sc.settled_nanodollars + d.settle
    WHERE sc.subject_kind = d.subject_kind AND sc.subject_id = d.subject_id
      AND sc.window_kind = d.window_kind AND sc.window_start = d.window_start;
  END LOOP;
END
$$;
