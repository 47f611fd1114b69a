-- Settle, Release, expiry and lease spends for a batch of holds as one autocommit statement (group
-- commit): the ledger queues closings and applies them together, so a hot counter row is locked and
-- written once per batch, at the very end of the call, and released at its commit with no client
-- round trip.
--
-- Closings apply in the order given, so a hold named twice sees the earlier closing's effect. A hold
-- reserves its *remaining* amount (worst case - spent, at least 0) on every counter row it lists;
-- leaving 'held' takes that off, not the worst case placed at admission, since spends and trims
-- have already taken their part. p_to_states[i] is one of:
-- - 'spent' (leases only; another hold is 'not_found'): a request admitted from the lease spent
--   p_list_costs[i]. Recorded once per p_request_ids[i] (a repeat is 'already_closed'). The cost is
--   settled whatever the hold's state, since the spend happened even after the lease was released
--   or expired; while the lease is held, it also comes off the reservation, but never more than the
--   lease still reserves, so other holds' reservations on the row stay whole. The state stays,
--   except for a lease its gateway is done with (gateway_done): the spend that completes what the
--   gateway counted (covered_spent) releases the rest and closes it ('released'). A request that the
--   lease's expiry charged as lost (lease_spends.lost) has that charge replaced by its actual cost.
-- - 'released' with p_keeps[i] > 0 on a held hold (a trim): the hold keeps reserving that much (the
--   worst case of the gateway's requests still in flight) plus the spends the gateway counted
--   (p_spent[i]) that have not arrived yet, releases the rest, stays 'held' and expires at
--   p_expires_at[i] when given. A lease's final release (keep 0) whose counted spends have not all
--   arrived is such a trim too: they stay reserved until they arrive or the lease expires, so the
--   ceiling never dips between the release and the records; the lease is marked gateway_done and
--   lists no running request. Otherwise NULL or 0 releases the whole
--   remaining reservation.
-- - 'expired': the hold's gateway stopped renewing it (it is gone): its reservation is released and
--   what it covered is charged as spent (its list cost): an ordinary hold its worst case, a lease
--   the worst case of the requests it last reported running: each of them (covered_requests) whose
--   record has not arrived (recorded_requests, lease_spends) gets a lease_spends row with lost = true
--   and its worst case, for the sweep to publish its record; a lease whose gateway listed none (the
--   previous release) is charged its covered in-flight amount. Unless a trim or a renewal has moved
--   its expiry past p_closed_at[i] since the sweep listed it (then it is left alone, answered
--   'already_closed').
-- - 'settled': releases a held hold and adds the actual list cost; a hold that expired can still be
--   settled (the spend happened): the actual cost replaces what the expiry charged.
-- Every other closed hold stays as it is, which makes every closing idempotent.
--
-- Locks: every hold of the batch in id order first, then the counter rows in lock order (subject
-- kind, subject id, window kind, window start: `lockOrder` in src/holds/ceilings.ts, which agrees
-- with byte order for the ASCII ids the ledger is sent), the same order on every replica and in the
-- transaction for several ceilings, so no two writers wait on each other in a cycle. A spend's row in
-- lease_spends is written under its lease's lock, so two batches spending the same request for the
-- same lease do not race on it.
--
-- Threshold crossings: when a batch settles spend on a key's or an agent's row, the whole percentage
-- of the row's limit now settled (floor, at most 100) is compared with the highest one announced
-- before in the window (counted from 0 again once the limit changed); a higher one is recorded in
-- threshold_crossings (the outbox the ledger publishes from) with the one before, in this same
-- transaction, so a crossing is announced once and never lost. Several percentages crossed in one
-- batch are one crossing at the highest.
--
-- Cost: a settlement batch is mostly the spends of one lease, one after another. Their additions to
-- the lease's spent_nanodollars are summed in v_pending_spent and written in one UPDATE when the run
-- of spends on that lease ends (another hold, another kind of closing, or the end of the batch),
-- rather than one UPDATE per spend: each of those left one more row version of the same lease for
-- every later read in the batch to step over. Every read of the lease in between adds what is
-- pending, so each closing sees what it would have seen. The lines' deltas go into parallel arrays
-- of plain values (appended in place), one element per closing and line, and a hold's lines are
-- taken apart once per run of its closings: building a jsonb per closing was about 40 % of a batch
-- of lease spends.
--
-- One row per closing, `item` its 1-based position: outcome 'closed', 'already_closed' or 'not_found'.
CREATE OR REPLACE FUNCTION close_holds(
  p_hold_ids text[],
  p_to_states text[],
  p_closed_at timestamptz[],
  -- Set for 'settled' and 'spent'.
  p_list_costs bigint[],
  p_billed_costs bigint[],
  -- The defaults keep a caller of the previous signature (a replica not yet upgraded) working.
  p_request_ids text[] DEFAULT NULL,
  p_keeps bigint[] DEFAULT NULL,
  p_expires_at timestamptz[] DEFAULT NULL,
  p_spent bigint[] DEFAULT NULL
)
RETURNS TABLE (item integer, outcome text)
LANGUAGE plpgsql
AS $$
DECLARE
  v_state text;
  v_lines jsonb;
  v_is_lease boolean;
  v_expires_at timestamptz;
  v_remaining bigint;
  v_spent bigint;
  v_charged bigint;
  v_in_flight bigint;
  v_covered jsonb;
  v_covered_spent bigint;
  v_gateway_done boolean;
  v_lost boolean;
  v_lost_charge bigint;
  v_unreserve bigint;
  v_settle bigint;
  -- What the batch does to each counter row, one element per closing and line of its hold, in
  -- parallel arrays (appended in place): the row, the change, and what a crossing it causes names.
  dl_kind text[] := '{}';
  dl_subject text[] := '{}';
  dl_window text[] := '{}';
  dl_start timestamptz[] := '{}';
  dl_unreserve bigint[] := '{}';
  dl_settle bigint[] := '{}';
  dl_seq integer[] := '{}';
  dl_org text[] := '{}';
  dl_request text[] := '{}';
  dl_closed_at timestamptz[] := '{}';
  dl_name text[] := '{}';
  dl_workspace text[] := '{}';
  -- The lines of the hold read last, taken apart once per hold rather than once per closing.
  v_lines_of text;
  ln_kind text[];
  ln_subject text[];
  ln_window text[];
  ln_start timestamptz[];
  ln_name text[];
  ln_workspace text[];
  v_worst_case bigint;
  -- Spends of the current run on one lease not yet written to it (see Cost above).
  v_pending_hold text;
  v_pending_spent bigint := 0;
  v_org_id text;
  v_request_id text;
  d record;
  c record;
  v_percent integer;
  v_previous integer;
BEGIN
  PERFORM 1 FROM holds h WHERE h.hold_id = ANY (p_hold_ids) ORDER BY h.hold_id FOR UPDATE;

  FOR i IN 1 .. coalesce(array_length(p_hold_ids, 1), 0) LOOP
    item := i;
    IF v_pending_spent <> 0 AND (p_to_states[i] <> 'spent' OR p_hold_ids[i] IS DISTINCT FROM v_pending_hold) THEN
      UPDATE holds h SET spent_nanodollars = h.spent_nanodollars + v_pending_spent WHERE h.hold_id = v_pending_hold;
      v_pending_spent := 0;
    END IF;
    SELECT h.state, h.lines, h.is_lease, h.expires_at, h.worst_case_nanodollars,
           h.org_id, h.request_id, h.spent_nanodollars, coalesce(h.list_cost_nanodollars, 0), h.covered_in_flight_nanodollars,
           h.covered_requests, h.covered_spent_nanodollars, h.gateway_done
    INTO v_state, v_lines, v_is_lease, v_expires_at, v_worst_case, v_org_id, v_request_id, v_spent, v_charged, v_in_flight,
         v_covered, v_covered_spent, v_gateway_done
    FROM holds h
    WHERE h.hold_id = p_hold_ids[i];
    IF FOUND AND v_pending_spent <> 0 THEN
      v_spent := v_spent + v_pending_spent;
    END IF;
    v_remaining := greatest(v_worst_case - v_spent, 0);
    IF NOT FOUND OR (p_to_states[i] = 'spent' AND NOT v_is_lease) THEN
      outcome := 'not_found';
      RETURN NEXT;
      CONTINUE;
    END IF;
    v_unreserve := 0;
    v_settle := 0;

    IF p_to_states[i] = 'spent' THEN
      SELECT ls.lost, ls.list_cost_nanodollars INTO v_lost, v_lost_charge
      FROM lease_spends ls WHERE ls.request_id = p_request_ids[i];
      IF FOUND AND NOT v_lost THEN
        outcome := 'already_closed';
        RETURN NEXT;
        CONTINUE;
      END IF;
      IF FOUND THEN
        -- Charged as lost when its lease expired: the actual cost replaces the worst case.
        UPDATE lease_spends ls
        SET list_cost_nanodollars = p_list_costs[i], billed_cost_nanodollars = p_billed_costs[i],
            spent_at = p_closed_at[i], lost = false
        WHERE ls.request_id = p_request_ids[i];
        v_settle := p_list_costs[i] - v_lost_charge;
      ELSE
        INSERT INTO lease_spends (request_id, hold_id, list_cost_nanodollars, billed_cost_nanodollars, spent_at)
        VALUES (p_request_ids[i], p_hold_ids[i], p_list_costs[i], p_billed_costs[i], p_closed_at[i])
        ON CONFLICT (request_id) DO NOTHING;
        IF NOT FOUND THEN
          outcome := 'already_closed';
          RETURN NEXT;
          CONTINUE;
        END IF;
        v_settle := p_list_costs[i];
        IF v_state = 'held' AND v_gateway_done AND v_spent + p_list_costs[i] >= v_covered_spent THEN
          -- The last spend its gateway counted: the lease is fully spent and closes.
          v_unreserve := v_remaining;
          UPDATE holds h
          SET spent_nanodollars = h.spent_nanodollars + v_pending_spent + p_list_costs[i], state = 'released',
              closed_at = p_closed_at[i]
          WHERE h.hold_id = p_hold_ids[i];
          v_pending_spent := 0;
        ELSE
          IF v_state = 'held' THEN
            v_unreserve := least(p_list_costs[i], v_remaining);
          END IF;
          v_pending_hold := p_hold_ids[i];
          v_pending_spent := v_pending_spent + p_list_costs[i];
        END IF;
      END IF;

    ELSIF p_to_states[i] = 'released' AND v_state = 'held'
          AND (coalesce(p_keeps[i], 0) > 0 OR (v_is_lease AND coalesce(p_spent[i], 0) > v_spent)) THEN
      v_unreserve := greatest(v_remaining - p_keeps[i] - greatest(coalesce(p_spent[i], 0) - v_spent, 0), 0);
      UPDATE holds h
      SET worst_case_nanodollars = h.worst_case_nanodollars - v_unreserve,
          expires_at = coalesce(p_expires_at[i], h.expires_at),
          covered_in_flight_nanodollars = p_keeps[i],
          covered_spent_nanodollars = greatest(h.covered_spent_nanodollars, coalesce(p_spent[i], 0)),
          -- Keep 0: the gateway's final release, waiting only for spends on their way.
          gateway_done = h.gateway_done OR coalesce(p_keeps[i], 0) = 0,
          covered_requests = CASE WHEN coalesce(p_keeps[i], 0) = 0 THEN '{}'::jsonb ELSE h.covered_requests END
      WHERE h.hold_id = p_hold_ids[i];

    ELSIF v_state = 'held' AND NOT (p_to_states[i] = 'expired' AND v_expires_at > p_closed_at[i]) THEN
      v_unreserve := v_remaining;
      IF p_to_states[i] = 'settled' THEN
        v_settle := p_list_costs[i];
      ELSIF p_to_states[i] = 'expired' AND NOT v_is_lease THEN
        -- Lost with its gateway: what it covered is spend, not free.
        v_settle := v_remaining;
      ELSIF p_to_states[i] = 'expired' AND v_covered = '{}'::jsonb THEN
        v_settle := least(v_in_flight, v_remaining);
      ELSIF p_to_states[i] = 'expired' THEN
        -- Each running request whose record has not arrived is lost with the gateway: charged its
        -- worst case, once (a spend already recorded for it wins).
        WITH lost AS (
          INSERT INTO lease_spends (request_id, hold_id, list_cost_nanodollars, billed_cost_nanodollars, spent_at, lost)
          SELECT r.key, p_hold_ids[i], (r.value->>'worst_case')::bigint, 0, p_closed_at[i], true
          FROM jsonb_each(v_covered) AS r
          WHERE NOT EXISTS (SELECT 1 FROM recorded_requests rr WHERE rr.request_id = r.key)
          ORDER BY r.key
          ON CONFLICT (request_id) DO NOTHING
          RETURNING list_cost_nanodollars
        )
        SELECT coalesce(sum(l.list_cost_nanodollars), 0)::bigint INTO v_settle FROM lost l;
      END IF;
      UPDATE holds h
      SET state = p_to_states[i],
          closed_at = p_closed_at[i],
          list_cost_nanodollars = CASE WHEN p_to_states[i] = 'expired' THEN v_settle
                                       ELSE coalesce(p_list_costs[i], h.list_cost_nanodollars) END,
          billed_cost_nanodollars = coalesce(p_billed_costs[i], h.billed_cost_nanodollars)
      WHERE h.hold_id = p_hold_ids[i];

    ELSIF p_to_states[i] = 'settled' AND v_state = 'expired' THEN
      -- The actual cost replaces what the expiry charged (0 on holds expired before it charged).
      v_settle := p_list_costs[i] - v_charged;
      UPDATE holds h
      SET state = 'settled',
          closed_at = p_closed_at[i],
          list_cost_nanodollars = p_list_costs[i],
          billed_cost_nanodollars = p_billed_costs[i]
      WHERE h.hold_id = p_hold_ids[i];

    ELSE
      outcome := 'already_closed';
      RETURN NEXT;
      CONTINUE;
    END IF;

    -- Every line of a hold reserved the same amount, so each line takes the same change.
    IF v_unreserve <> 0 OR v_settle <> 0 THEN
      IF v_lines_of IS DISTINCT FROM p_hold_ids[i] THEN
        SELECT coalesce(array_agg(l.subject_kind), '{}'), coalesce(array_agg(l.subject_id), '{}'),
               coalesce(array_agg(l.window_kind), '{}'), coalesce(array_agg(l.window_start), '{}'),
               coalesce(array_agg(l.subject_name), '{}'), coalesce(array_agg(l.workspace_id), '{}')
        INTO ln_kind, ln_subject, ln_window, ln_start, ln_name, ln_workspace
        FROM jsonb_to_recordset(v_lines)
          AS l (subject_kind text, subject_id text, window_kind text, window_start timestamptz, subject_name text, workspace_id text);
        v_lines_of := p_hold_ids[i];
      END IF;
      FOR j IN 1 .. coalesce(array_length(ln_kind, 1), 0) LOOP
        dl_kind := array_append(dl_kind, ln_kind[j]);
        dl_subject := array_append(dl_subject, ln_subject[j]);
        dl_window := array_append(dl_window, ln_window[j]);
        dl_start := array_append(dl_start, ln_start[j]);
        dl_unreserve := array_append(dl_unreserve, v_unreserve);
        dl_settle := array_append(dl_settle, v_settle);
        dl_seq := array_append(dl_seq, i);
        dl_org := array_append(dl_org, v_org_id);
        -- The request a lease spend was for; otherwise the hold's own.
        dl_request := array_append(dl_request, coalesce(p_request_ids[i], v_request_id));
        dl_closed_at := array_append(dl_closed_at, p_closed_at[i]);
        dl_name := array_append(dl_name, ln_name[j]);
        dl_workspace := array_append(dl_workspace, ln_workspace[j]);
      END LOOP;
    END IF;
    outcome := 'closed';
    RETURN NEXT;
  END LOOP;
  IF v_pending_spent <> 0 THEN
    UPDATE holds h SET spent_nanodollars = h.spent_nanodollars + v_pending_spent WHERE h.hold_id = v_pending_hold;
  END IF;

  FOR d IN
    SELECT x.subject_kind, x.subject_id, x.window_kind, x.window_start,
           sum(x.unreserve)::bigint AS unreserve, sum(x.settle)::bigint AS settle,
           -- The latest closing of the batch that settled on the row, for a crossing it causes.
           (array_agg(x.org_id ORDER BY x.seq DESC))[1] AS org_id,
           (array_agg(x.request_id ORDER BY x.settle > 0 DESC, x.seq DESC))[1] AS request_id,
           max(x.closed_at) AS closed_at,
           (array_agg(coalesce(x.subject_name, '') ORDER BY x.seq DESC))[1] AS subject_name,
           (array_agg(coalesce(x.workspace_id, '') ORDER BY x.seq DESC))[1] AS workspace_id
    FROM unnest(dl_kind, dl_subject, dl_window, dl_start, dl_unreserve, dl_settle, dl_seq, dl_org, dl_request, dl_closed_at,
                dl_name, dl_workspace)
      AS x (subject_kind, subject_id, window_kind, window_start, unreserve, settle, seq, org_id, request_id, closed_at,
            subject_name, workspace_id)
    GROUP BY x.subject_kind, x.subject_id, x.window_kind, x.window_start
    ORDER BY x.subject_kind COLLATE "C", x.subject_id COLLATE "C", x.window_kind COLLATE "C", x.window_start
  LOOP
    UPDATE spend_counters sc
    SET reserved_nanodollars = sc.reserved_nanodollars - d.unreserve,
        settled_nanodollars = sc.settled_nanodollars + d.settle
    WHERE sc.subject_kind = d.subject_kind AND sc.subject_id = d.subject_id
      AND sc.window_kind = d.window_kind AND sc.window_start = d.window_start
    RETURNING sc.settled_nanodollars, sc.checked_limit_nanodollars, sc.checked_hard, sc.announced_percent,
              sc.announced_limit_nanodollars
    INTO c;
    IF NOT FOUND OR d.settle <= 0 OR d.subject_kind NOT IN ('key', 'agent') THEN
      CONTINUE;
    END IF;
    IF c.checked_limit_nanodollars <= 0 THEN
      CONTINUE;
    END IF;
    v_percent := least(100, floor(c.settled_nanodollars::numeric * 100 / c.checked_limit_nanodollars))::integer;
    v_previous := CASE WHEN c.announced_limit_nanodollars = c.checked_limit_nanodollars THEN c.announced_percent ELSE 0 END;
    IF v_percent > v_previous THEN
      UPDATE spend_counters sc
      SET announced_percent = v_percent,
          announced_limit_nanodollars = c.checked_limit_nanodollars
      WHERE sc.subject_kind = d.subject_kind AND sc.subject_id = d.subject_id
        AND sc.window_kind = d.window_kind AND sc.window_start = d.window_start;
      INSERT INTO threshold_crossings
        (crossing_id, org_id, subject_kind, subject_id, subject_name, workspace_id, window_kind, window_start, percent,
         previous_percent, hard, limit_nanodollars, usage_nanodollars, request_id, crossed_at)
      VALUES
        ('thr_' || replace(gen_random_uuid()::text, '-', ''), d.org_id, d.subject_kind, d.subject_id, d.subject_name,
         d.workspace_id, d.window_kind, d.window_start, v_percent, v_previous, c.checked_hard,
         c.checked_limit_nanodollars, c.settled_nanodollars, d.request_id, d.closed_at);
    END IF;
  END LOOP;
END
$$;
