-- Turns of runs settled as their requests are recorded: recordRequests (src/usage/usage-store.ts)
-- calls this inside its own statement, so a batch of finished requests and the turns among them
-- are one autocommit statement, one commit, and a turn costs no statement of its own.
--
-- Item i is the request p_request_ids[i]; a NULL p_run_ids[i] is no turn. In the order given, each
-- turn of the organisation's run that is still 'admitted' or 'expired' settles once (a served or
-- failed one is left alone, so a record sent again changes nothing):
-- - the turn's reservation comes off the run (an expired turn's was already taken off by the sweep);
-- - a served turn (p_served[i]) adds its cost to `spent` and to the current tumbling one-minute
--   window (UTC minute of p_at[i]), its tool calls to `tool_calls_used`, and to the consecutive
--   tool calls without progress when it finished with 'tool_calls' (any other finish resets them);
--   a failed turn moves no money and counts nothing: it stays a turn;
-- - then an open run is exhausted when its spend reached the budget, else paused when one minute's
--   spend passed max_cost_per_minute ('cost_velocity') or the tool calls without progress passed
--   their limit ('no_progress'), with paused_at = p_at[i]. A run that is not open only moves money
--   (the one table of transitions, src/runs/run-states.ts, moves only an open run on these).
-- The turn row keeps what the turn did: state 'served' or 'failed', cost (0 when failed), model,
-- finish reason, counts and settled_at.
--
-- Locks: the batch's runs in id order, first (recordRequests evaluates this before its own writes),
-- as admission and the sweep lock a run before its turns, so no two writers wait in a cycle.
-- The turns to settle are read in one query, each run's rules are applied here in the batch's order,
-- and the runs and turns are written in one statement each: a run's row is written once per batch
-- whatever its number of turns, and the runs stay locked for as short a time as possible (the next
-- turn's admission waits on that lock).
-- Answers how many turns it settled.
CREATE OR REPLACE FUNCTION settle_run_turns(
  p_request_ids text[],
  p_org_ids text[],
  p_run_ids text[],
  p_served boolean[],
  p_costs bigint[],
  p_models text[],
  p_finish_reasons text[],
  p_tool_calls integer[],
  p_failed_tool_calls integer[],
  p_prompt_tokens bigint[],
  p_cached_tokens bigint[],
  p_at timestamptz[]
)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  r runs%ROWTYPE;
  it record;
  v_minute timestamptz;
  v_runs runs[] := '{}';
  v_items integer[] := '{}';
BEGIN
  PERFORM 1 FROM runs WHERE run_id = ANY (p_run_ids) ORDER BY run_id FOR UPDATE;

  -- Each turn still to settle, by its first mention in the batch (a later one finds it settled),
  -- with its run as locked above; a run's turns in the batch's order. Each is looked up by its
  -- primary key (LATERAL ... LIMIT 1 keeps the planner from scanning a run's every turn instead).
  FOR it IN
    SELECT * FROM (
      SELECT DISTINCT ON (x.request_id) x.i, t.state, t.reserved_nanodollars, u.run
      FROM unnest(p_request_ids, p_org_ids, p_run_ids) WITH ORDINALITY AS x(request_id, org_id, run_id, i)
      CROSS JOIN LATERAL (SELECT ru AS run FROM runs ru WHERE ru.run_id = x.run_id AND ru.org_id = x.org_id LIMIT 1) AS u
      CROSS JOIN LATERAL (
        SELECT rt.state, rt.reserved_nanodollars FROM run_turns rt WHERE rt.request_id = x.request_id AND rt.run_id = x.run_id LIMIT 1
      ) AS t
      WHERE t.state IN ('admitted', 'expired')
      ORDER BY x.request_id, x.i
    ) AS turn
    ORDER BY (turn.run).run_id, turn.i
  LOOP
    IF r.run_id IS DISTINCT FROM (it.run).run_id THEN
      IF r.run_id IS NOT NULL THEN
        v_runs := v_runs || r;
      END IF;
      r := it.run;
    END IF;

    IF it.state = 'admitted' THEN
      r.reserved_nanodollars := greatest(r.reserved_nanodollars - it.reserved_nanodollars, 0);
    END IF;
    IF p_served[it.i] THEN
      r.spent_nanodollars := r.spent_nanodollars + p_costs[it.i];
      r.tool_calls_used := r.tool_calls_used + p_tool_calls[it.i];
      v_minute := to_timestamp(floor(extract(epoch FROM p_at[it.i]) / 60) * 60);
      IF r.minute_start IS DISTINCT FROM v_minute THEN
        r.minute_start := v_minute;
        r.minute_spent_nanodollars := 0;
      END IF;
      r.minute_spent_nanodollars := r.minute_spent_nanodollars + p_costs[it.i];
      r.tool_calls_without_progress :=
        CASE WHEN p_finish_reasons[it.i] = 'tool_calls' THEN r.tool_calls_without_progress + p_tool_calls[it.i] ELSE 0 END;
      IF r.status = 'open' THEN
        IF r.spent_nanodollars >= r.budget_nanodollars THEN
          r.status := 'exhausted';
        ELSIF r.max_cost_per_minute_nanodollars IS NOT NULL AND r.minute_spent_nanodollars > r.max_cost_per_minute_nanodollars THEN
          r.status := 'paused';
          r.pause_reason := 'cost_velocity';
          r.paused_at := p_at[it.i];
        ELSIF r.max_tool_calls_without_progress IS NOT NULL AND r.tool_calls_without_progress > r.max_tool_calls_without_progress THEN
          r.status := 'paused';
          r.pause_reason := 'no_progress';
          r.paused_at := p_at[it.i];
        END IF;
      END IF;
    END IF;
    r.updated_at := p_at[it.i];
    v_items := v_items || it.i::integer;
  END LOOP;
  IF r.run_id IS NULL THEN
    RETURN 0;
  END IF;
  v_runs := v_runs || r;

  UPDATE runs u SET status = v.status, spent_nanodollars = v.spent_nanodollars, reserved_nanodollars = v.reserved_nanodollars,
    tool_calls_used = v.tool_calls_used, tool_calls_without_progress = v.tool_calls_without_progress,
    minute_start = v.minute_start, minute_spent_nanodollars = v.minute_spent_nanodollars, pause_reason = v.pause_reason,
    paused_at = v.paused_at, updated_at = v.updated_at
  FROM unnest(v_runs) AS v
  WHERE u.run_id = v.run_id;
  UPDATE run_turns t SET state = CASE WHEN p_served[x.i] THEN 'served' ELSE 'failed' END,
    cost_nanodollars = CASE WHEN p_served[x.i] THEN p_costs[x.i] ELSE 0 END, model = p_models[x.i],
    finish_reason = p_finish_reasons[x.i], tool_calls = p_tool_calls[x.i], failed_tool_calls = p_failed_tool_calls[x.i],
    prompt_tokens = p_prompt_tokens[x.i], cached_tokens = p_cached_tokens[x.i], settled_at = p_at[x.i]
  FROM unnest(v_items) AS x(i)
  WHERE t.request_id = p_request_ids[x.i];
  RETURN cardinality(v_items);
END;
$$;
