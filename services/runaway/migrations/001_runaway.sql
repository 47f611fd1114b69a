-- Spend and request counts per subject (a key by its hash, an agent by its name within the
-- organisation) in 5-minute buckets by the request's own time: three make the sweep's 15-minute
-- window, the 288 before them its usual day. Kept about 25 hours. Money is bigint nanodollars.
CREATE TABLE buckets (
  org_id text NOT NULL,
  subject_kind text NOT NULL CHECK (subject_kind IN ('key', 'agent')),
  subject text NOT NULL,
  bucket_start timestamptz NOT NULL,
  spend_nanodollars bigint NOT NULL DEFAULT 0,
  requests bigint NOT NULL DEFAULT 0,
  -- The key's name as last seen (keys are named in flags); null for an agent.
  key_name text,
  PRIMARY KEY (org_id, subject_kind, subject, bucket_start)
);

-- The sweep reads the last window of every subject, and pruning drops old buckets, by time.
CREATE INDEX buckets_by_start ON buckets (bucket_start);

-- Requests already counted, by generation id: a redelivered or replayed event adds nothing. Kept as
-- long as the buckets; an event older than that is not counted at all.
CREATE TABLE counted_requests (
  request_id text PRIMARY KEY,
  created_at timestamptz NOT NULL
);

CREATE INDEX counted_requests_by_time ON counted_requests (created_at);

-- One row per subject ever flagged: the gate that allows one flag per subject per hour. The flag is
-- written in the same statement as the row's conditional update, so two sweepers racing for one
-- subject produce one flag.
CREATE TABLE subject_flags (
  org_id text NOT NULL,
  subject_kind text NOT NULL,
  subject text NOT NULL,
  last_flagged_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, subject_kind, subject)
);

-- The runaway flags (spec doc 1 "Runaway flag"), kept 30 days. `published_at` is null until the
-- flag's event reached the bus; `publish_claimed_until` keeps two sweepers from resending one flag
-- at the same moment.
CREATE TABLE flags (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  subject_kind text NOT NULL CHECK (subject_kind IN ('key', 'agent')),
  subject text NOT NULL,
  key_hash text,
  key_name text,
  action text NOT NULL CHECK (action IN ('alert', 'paused')),
  kind text NOT NULL CHECK (kind IN ('spend', 'rate')),
  window_start timestamptz NOT NULL,
  window_end timestamptz NOT NULL,
  spend_nanodollars bigint NOT NULL,
  usual_spend_nanodollars bigint NOT NULL,
  requests bigint NOT NULL,
  usual_requests double precision NOT NULL,
  created_at timestamptz NOT NULL,
  published_at timestamptz,
  publish_claimed_until timestamptz
);

CREATE INDEX flags_org_newest ON flags (org_id, created_at DESC, id DESC);
CREATE INDEX flags_unpublished ON flags (created_at) WHERE published_at IS NULL;

-- What a flag does to a key: `alert` (the default, also when no row exists) or `pause`.
CREATE TABLE settings (
  org_id text PRIMARY KEY,
  runaway_action text NOT NULL CHECK (runaway_action IN ('alert', 'pause')),
  updated_at timestamptz NOT NULL
);
