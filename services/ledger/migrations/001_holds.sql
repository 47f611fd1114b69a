-- One row per subject and window: the hot row every admission of that subject locks. `settled` is
-- list-price spend settled in the window; `reserved` is the worst case of every open hold placed in
-- it. The ceiling's limit and mode are owned by the gateway and sent with each call; the last ones
-- checked are kept here because the conditional upsert compares against them under the row lock.
CREATE TABLE spend_counters (
  subject_kind text NOT NULL,
  subject_id text NOT NULL,
  window_kind text NOT NULL CHECK (window_kind IN ('daily', 'weekly', 'monthly', 'lifetime')),
  window_start timestamptz NOT NULL,
  window_end timestamptz,
  settled_nanodollars bigint NOT NULL DEFAULT 0,
  reserved_nanodollars bigint NOT NULL DEFAULT 0,
  checked_limit_nanodollars bigint NOT NULL,
  checked_hard boolean NOT NULL,
  PRIMARY KEY (subject_kind, subject_id, window_kind, window_start)
);

-- A hold reserves one request's worst case on each counter row listed in `lines`
-- ([{subject_kind, subject_id, window_kind, window_start, amount}], sorted in lock order).
CREATE TABLE holds (
  hold_id text PRIMARY KEY,
  request_id text NOT NULL UNIQUE,
  org_id text NOT NULL,
  worst_case_nanodollars bigint NOT NULL,
  is_byok boolean NOT NULL,
  lines jsonb NOT NULL,
  limit_warning text NOT NULL DEFAULT '',
  state text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'settled', 'released', 'expired')),
  list_cost_nanodollars bigint,
  billed_cost_nanodollars bigint,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  closed_at timestamptz
);

CREATE INDEX holds_open_by_expiry ON holds (expires_at) WHERE state = 'held';
