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
  v_turn_state text;
  v_turn_reserved bigint;
  v_minute timestamptz;
  v_settled integer := 0;
BEGIN
  PERFORM 1 FROM runs WHERE run_id = ANY (p_run_ids) ORDER BY run_id FOR UPDATE;

  FOR i IN 1 .. coalesce(array_length(p_request_ids, 1), 0) LOOP
    CONTINUE WHEN p_run_ids[i] IS NULL;
    SELECT * INTO r FROM runs WHERE run_id = p_run_ids[i] AND org_id = p_org_ids[i];
    CONTINUE WHEN NOT FOUND;
    SELECT t.state, t.reserved_nanodollars INTO v_turn_state, v_turn_reserved
    FROM run_turns t WHERE t.request_id = p_request_ids[i] AND t.run_id = r.run_id;
    CONTINUE WHEN NOT FOUND OR v_turn_state IN ('served', 'failed');

    IF v_turn_state = 'admitted' THEN
      r.reserved_nanodollars := greatest(r.reserved_nanodollars - v_turn_reserved, 0);
    END IF;
    IF p_served[i] THEN
      r.spent_nanodollars := r.spent_nanodollars + p_costs[i];
      r.tool_calls_used := r.tool_calls_used + p_tool_calls[i];
      v_minute := to_timestamp(floor(extract(epoch FROM p_at[i]) / 60) * 60);
      IF r.minute_start IS DISTINCT FROM v_minute THEN
        r.minute_start := v_minute;
        r.minute_spent_nanodollars := 0;
      END IF;
      r.minute_spent_nanodollars := r.minute_spent_nanodollars + p_costs[i];
      r.tool_calls_without_progress :=
        CASE WHEN p_finish_reasons[i] = 'tool_calls' THEN r.tool_calls_without_progress + p_tool_calls[i] ELSE 0 END;
      IF r.status = 'open' THEN
        IF r.spent_nanodollars >= r.budget_nanodollars THEN
          r.status := 'exhausted';
        ELSIF r.max_cost_per_minute_nanodollars IS NOT NULL AND r.minute_spent_nanodollars > r.max_cost_per_minute_nanodollars THEN
          r.status := 'paused';
          r.pause_reason := 'cost_velocity';
          r.paused_at := p_at[i];
        ELSIF r.max_tool_calls_without_progress IS NOT NULL AND r.tool_calls_without_progress > r.max_tool_calls_without_progress THEN
          r.status := 'paused';
          r.pause_reason := 'no_progress';
          r.paused_at := p_at[i];
        END IF;
      END IF;
    END IF;

    UPDATE runs SET status = r.status, spent_nanodollars = r.spent_nanodollars, reserved_nanodollars = r.reserved_nanodollars,
      tool_calls_used = r.tool_calls_used, tool_calls_without_progress = r.tool_calls_without_progress,
      minute_start = r.minute_start, minute_spent_nanodollars = r.minute_spent_nanodollars, pause_reason = r.pause_reason,
      paused_at = r.paused_at, updated_at = p_at[i]
    WHERE run_id = r.run_id;
    UPDATE run_turns SET state = CASE WHEN p_served[i] THEN 'served' ELSE 'failed' END,
      cost_nanodollars = CASE WHEN p_served[i] THEN p_costs[i] ELSE 0 END, model = p_models[i],
      finish_reason = p_finish_reasons[i], tool_calls = p_tool_calls[i], failed_tool_calls = p_failed_tool_calls[i],
      prompt_tokens = p_prompt_tokens[i], cached_tokens = p_cached_tokens[i], settled_at = p_at[i]
    WHERE request_id = p_request_ids[i];
    v_settled := v_settled + 1;
  END LOOP;
  RETURN v_settled;
END;
$$;
