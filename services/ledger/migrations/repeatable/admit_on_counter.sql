-- Admission on one counter row (a request that one ceiling counts: the common case), for a batch
-- of requests at once. One call is one autocommit statement, so the hot row is locked once per
-- batch and released at its commit, with no client round trip in between; the ledger sends every
-- request that arrived for the row while the previous batch ran (group commit). Inside a function
-- the statements' plans are prepared once per session instead of on every call.
--
-- Requests are decided one after another, each under the row lock: the counter is upserted only
-- while the ceiling is soft or settled + reserved (earlier requests of the batch included) is below
-- the limit, the same guard as the transaction for several ceilings; the hold is inserted only
-- after the row took the reservation, so a refusal changes nothing.
--
-- One row per request, `item` its 1-based position: answer 'existing' (the request already has a
-- hold: its id, org and warning), 'refused', or 'placed' (with the counter after the reservation).
CREATE OR REPLACE FUNCTION admit_on_counter(
  p_subject_kind text,
  p_subject_id text,
  p_window_kind text,
  p_window_start timestamptz,
  p_window_end timestamptz,
  p_hold_ids text[],
  p_request_ids text[],
  p_org_ids text[],
  p_amounts bigint[],
  p_is_byok boolean[],
  p_lines jsonb[],
  p_limits bigint[],
  p_hard boolean[],
  -- Stored with the hold when its ceiling is soft and was already at or past its limit.
  p_warnings text[],
  p_created_at timestamptz[],
  p_expires_at timestamptz[]
)
RETURNS TABLE (
  item integer,
  answer text,
  answer_hold_id text,
  answer_org_id text,
  answer_warning text,
  counter_settled bigint,
  counter_reserved bigint
)
LANGUAGE plpgsql
AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_hold_ids, 1), 0) LOOP
    item := i;
    answer_hold_id := NULL;
    answer_org_id := NULL;
    answer_warning := NULL;
    counter_settled := NULL;
    counter_reserved := NULL;

    SELECT h.hold_id, h.org_id, h.limit_warning INTO answer_hold_id, answer_org_id, answer_warning
    FROM holds h
    WHERE h.request_id = p_request_ids[i];
    IF FOUND THEN
      answer := 'existing';
      RETURN NEXT;
      CONTINUE;
    END IF;

    INSERT INTO spend_counters AS sc
      (subject_kind, subject_id, window_kind, window_start, window_end,
       reserved_nanodollars, checked_limit_nanodollars, checked_hard)
    VALUES
      (p_subject_kind, p_subject_id, p_window_kind, p_window_start, p_window_end, p_amounts[i], p_limits[i], p_hard[i])
    ON CONFLICT (subject_kind, subject_id, window_kind, window_start) DO UPDATE
      SET reserved_nanodollars = sc.reserved_nanodollars + EXCLUDED.reserved_nanodollars,
          checked_limit_nanodollars = EXCLUDED.checked_limit_nanodollars,
          checked_hard = EXCLUDED.checked_hard
      WHERE NOT EXCLUDED.checked_hard
         OR sc.settled_nanodollars + sc.reserved_nanodollars < EXCLUDED.checked_limit_nanodollars
    RETURNING sc.settled_nanodollars, sc.reserved_nanodollars INTO counter_settled, counter_reserved;
    IF NOT FOUND THEN
      answer := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;

    answer_warning := '';
    IF NOT p_hard[i] AND counter_settled + counter_reserved - p_amounts[i] >= p_limits[i] THEN
      answer_warning := p_warnings[i];
    END IF;
    INSERT INTO holds
      (hold_id, request_id, org_id, worst_case_nanodollars, is_byok, lines, limit_warning, created_at, expires_at)
    VALUES
      (p_hold_ids[i], p_request_ids[i], p_org_ids[i], p_amounts[i], p_is_byok[i], p_lines[i], answer_warning,
       p_created_at[i], p_expires_at[i])
    ON CONFLICT (request_id) DO NOTHING;
    IF NOT FOUND THEN
      -- A concurrent Admit of the same request committed its hold after the lookup above. The
      -- reservation just made has no hold to release it, so the whole call is undone; the caller
      -- asks again, and the lookup then finds that hold.
      RAISE EXCEPTION 'request % was admitted concurrently', p_request_ids[i] USING ERRCODE = 'LR001';
    END IF;
    answer := 'placed';
    answer_hold_id := p_hold_ids[i];
    answer_org_id := p_org_ids[i];
    RETURN NEXT;
  END LOOP;
END
$$;
