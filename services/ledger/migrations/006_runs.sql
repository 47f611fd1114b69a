-- Agent runs: one goal, many turns, one budget. A run belongs to its organisation (a supervisor and
-- workers with different keys share it). `reserved` is the worst case of its turns admitted and not
-- yet settled; `spent` is settled list-price spend. The detectors' counters: consecutive tool calls
-- without an answering turn, and the spend settled in the current tumbling one-minute window.
CREATE TABLE runs (
  run_id text PRIMARY KEY,
  org_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'paused', 'completed', 'exhausted', 'cancelled')),
  goal text,
  budget_nanodollars bigint NOT NULL CHECK (budget_nanodollars > 0),
  spent_nanodollars bigint NOT NULL DEFAULT 0,
  reserved_nanodollars bigint NOT NULL DEFAULT 0,
  max_turns integer,
  turns_used integer NOT NULL DEFAULT 0,
  max_tool_calls integer,
  tool_calls_used integer NOT NULL DEFAULT 0,
  model_policy jsonb NOT NULL DEFAULT '{}'::jsonb,
  max_cost_per_minute_nanodollars bigint,
  max_tool_calls_without_progress integer,
  tool_calls_without_progress integer NOT NULL DEFAULT 0,
  minute_start timestamptz,
  minute_spent_nanodollars bigint NOT NULL DEFAULT 0,
  pause_reason text CHECK (pause_reason IN ('cost_velocity', 'no_progress')),
  paused_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  closed_at timestamptz
);
CREATE INDEX runs_by_org ON runs (org_id, created_at DESC, run_id DESC);

-- One row per turn (a chat completion naming the run), keyed by its request id: admitted with its
-- worst case reserved on the run, then served or failed at settlement, or expired by the sweep.
CREATE TABLE run_turns (
  request_id text PRIMARY KEY,
  run_id text NOT NULL REFERENCES runs,
  turn integer NOT NULL,
  state text NOT NULL CHECK (state IN ('admitted', 'served', 'failed', 'expired')),
  reserved_nanodollars bigint NOT NULL,
  cost_nanodollars bigint NOT NULL DEFAULT 0,
  model text NOT NULL DEFAULT '',
  finish_reason text NOT NULL DEFAULT '',
  tool_calls integer NOT NULL DEFAULT 0,
  failed_tool_calls integer NOT NULL DEFAULT 0,
  prompt_tokens bigint NOT NULL DEFAULT 0,
  cached_tokens bigint NOT NULL DEFAULT 0,
  admitted_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  settled_at timestamptz,
  UNIQUE (run_id, turn)
);
CREATE INDEX run_turns_open_by_expiry ON run_turns (expires_at) WHERE state = 'admitted';
