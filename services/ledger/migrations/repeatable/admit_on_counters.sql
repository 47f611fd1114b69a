-- Admission for a batch of requests that reserve on the same counter rows (a key ceiling, the
-- workspace's and the agent's budgets: every row that counts the request), as one autocommit call.
-- The rows are locked for that one statement and its commit, with no client round trip in between;
-- the ledger sends every request that arrived for the same rows while the previous batch ran
-- (group commit). Inside a function the statements' plans are prepared once per session.
--
-- The rows come in lock order (`lockOrder` in src/holds/ceilings.ts: subject kind, subject id,
-- window kind, window start), and are locked one after another in that order, missing ones inserted,
-- the same order as close_holds and the lease transaction, so no two writers wait on each other in a
-- cycle. Then requests are decided one after another against the locked totals (earlier
-- requests of the batch included): a request is refused when any hard row's settled + reserved is
-- already at or past its limit, and then nothing is reserved for it; otherwise its worst case is
-- reserved on every row and its hold inserted. So a window is crossed by at most one admitted
-- request, however many race. Each row is written once at the end with the batch's reservations.
--
-- Per request and row (entry (i - 1) * rows + j, row-major): the limit, whether it is hard, and the
-- sentence to warn with when the row is soft and already at or past its limit. Warnings are joined
-- in `p_warning_order` (row positions in the caller's precedence).
--
-- One row per request, `item` its 1-based position: answer 'existing' (the request already has a
-- hold: its id, org and warning), 'refused' (`refused_rows`: every hard row at or past its limit,
-- by position) or 'placed'.
CREATE OR REPLACE FUNCTION admit_on_counters(
  p_subject_kinds text[],
  p_subject_ids text[],
  p_window_kinds text[],
  p_window_starts timestamptz[],
  p_window_ends timestamptz[],
  p_hold_ids text[],
  p_request_ids text[],
  p_org_ids text[],
  p_workspace_ids text[],
  p_agents text[],
  p_amounts bigint[],
  p_is_byok boolean[],
  p_lines jsonb[],
  p_created_at timestamptz[],
  p_expires_at timestamptz[],
  p_limits bigint[],
  p_hard boolean[],
  p_warnings text[],
  p_warning_order integer[]
)
RETURNS TABLE (
  item integer,
  answer text,
  answer_hold_id text,
  answer_org_id text,
  answer_warning text,
  refused_rows integer[]
)
LANGUAGE plpgsql
AS $$
DECLARE
  v_rows integer := coalesce(array_length(p_subject_kinds, 1), 0);
  v_settled bigint[] := '{}';
  v_reserved bigint[] := '{}';
  v_added bigint[] := '{}';
  v_last integer := 1;
  k integer;
  s bigint;
  r bigint;
BEGIN
  -- Each row is locked before the next one is touched. An existing row is locked by reading it FOR
  -- UPDATE (no new row version: the row is written once, at the end); a missing one is inserted
  -- (empty) and then locked the same way, or found locked by a concurrent insert and waited for.
  FOR j IN 1 .. v_rows LOOP
    LOOP
      SELECT sc.settled_nanodollars, sc.reserved_nanodollars INTO s, r
      FROM spend_counters sc
      WHERE sc.subject_kind = p_subject_kinds[j] AND sc.subject_id = p_subject_ids[j]
        AND sc.window_kind = p_window_kinds[j] AND sc.window_start = p_window_starts[j]
      FOR UPDATE;
      EXIT WHEN FOUND;
      INSERT INTO spend_counters
        (subject_kind, subject_id, window_kind, window_start, window_end, checked_limit_nanodollars, checked_hard)
      VALUES
        (p_subject_kinds[j], p_subject_ids[j], p_window_kinds[j], p_window_starts[j], p_window_ends[j], p_limits[j], p_hard[j])
      ON CONFLICT (subject_kind, subject_id, window_kind, window_start) DO NOTHING;
    END LOOP;
    v_settled[j] := s;
    v_reserved[j] := r;
    v_added[j] := 0;
  END LOOP;

  FOR i IN 1 .. coalesce(array_length(p_hold_ids, 1), 0) LOOP
    item := i;
    answer_hold_id := NULL;
    answer_org_id := NULL;
    answer_warning := NULL;
    refused_rows := NULL;

    SELECT h.hold_id, h.org_id, h.limit_warning INTO answer_hold_id, answer_org_id, answer_warning
    FROM holds h
    WHERE h.request_id = p_request_ids[i];
    IF FOUND THEN
      answer := 'existing';
      RETURN NEXT;
      CONTINUE;
    END IF;

    refused_rows := '{}';
    FOR j IN 1 .. v_rows LOOP
      k := (i - 1) * v_rows + j;
      IF p_hard[k] AND v_settled[j] + v_reserved[j] + v_added[j] >= p_limits[k] THEN
        refused_rows := refused_rows || j;
      END IF;
    END LOOP;
    IF cardinality(refused_rows) > 0 THEN
      answer := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;
    refused_rows := NULL;

    answer_warning := '';
    FOREACH k IN ARRAY p_warning_order LOOP
      IF NOT p_hard[(i - 1) * v_rows + k]
         AND v_settled[k] + v_reserved[k] + v_added[k] >= p_limits[(i - 1) * v_rows + k] THEN
        answer_warning := concat_ws(' ', nullif(answer_warning, ''), p_warnings[(i - 1) * v_rows + k]);
      END IF;
    END LOOP;

    INSERT INTO holds
      (hold_id, request_id, org_id, workspace_id, agent, worst_case_nanodollars, is_byok, lines, limit_warning,
       created_at, expires_at)
    VALUES
      (p_hold_ids[i], p_request_ids[i], p_org_ids[i], p_workspace_ids[i], p_agents[i], p_amounts[i], p_is_byok[i],
       p_lines[i], answer_warning, p_created_at[i], p_expires_at[i])
    ON CONFLICT (request_id) DO NOTHING;
    IF NOT FOUND THEN
      -- A concurrent Admit of the same request committed its hold after the lookup above. The
      -- reservations of the batch so far have no hold to release them, so the whole call is undone;
      -- the caller asks again, and the lookup then finds that hold.
      RAISE EXCEPTION 'request % was admitted concurrently', p_request_ids[i] USING ERRCODE = 'LR001';
    END IF;
    FOR j IN 1 .. v_rows LOOP
      v_added[j] := v_added[j] + p_amounts[i];
    END LOOP;
    v_last := i;
    answer := 'placed';
    answer_hold_id := p_hold_ids[i];
    answer_org_id := p_org_ids[i];
    RETURN NEXT;
  END LOOP;

  -- The rows keep the limits and modes of the last request placed (the first when none was), as
  -- each Admit records them; a row is written only when that or its reservation changes.
  FOR j IN 1 .. v_rows LOOP
    k := (v_last - 1) * v_rows + j;
    UPDATE spend_counters sc
    SET reserved_nanodollars = sc.reserved_nanodollars + v_added[j],
        checked_limit_nanodollars = p_limits[k],
        checked_hard = p_hard[k]
    WHERE sc.subject_kind = p_subject_kinds[j] AND sc.subject_id = p_subject_ids[j]
      AND sc.window_kind = p_window_kinds[j] AND sc.window_start = p_window_starts[j]
      AND (v_added[j] <> 0 OR sc.checked_limit_nanodollars <> p_limits[k] OR sc.checked_hard <> p_hard[k]);
  END LOOP;
END
$$;
