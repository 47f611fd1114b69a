-- Budgets the ledger owns (the gateway sends key ceilings with each call; these it does not know).
-- A workspace budget binds every key of the workspace; one per workspace and window.
CREATE TABLE workspace_budgets (
  org_id text NOT NULL,
  workspace_id text NOT NULL,
  window_kind text NOT NULL CHECK (window_kind IN ('daily', 'weekly', 'monthly', 'lifetime')),
  limit_nanodollars bigint NOT NULL CHECK (limit_nanodollars >= 0),
  include_byok boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, workspace_id, window_kind)
);

-- An agent budget binds the requests that name the agent (X-Router-Agent): organisation-wide
-- (`workspace_id` '') or only those of one workspace's keys. Both may exist; both apply.
CREATE TABLE agent_budgets (
  org_id text NOT NULL,
  agent text NOT NULL,
  workspace_id text NOT NULL DEFAULT '',
  window_kind text NOT NULL CHECK (window_kind IN ('daily', 'weekly', 'monthly', 'lifetime')),
  limit_nanodollars bigint NOT NULL CHECK (limit_nanodollars >= 0),
  include_byok boolean NOT NULL,
  hard boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, agent, workspace_id, window_kind)
);

-- Whose request a hold covers, so the in-flight part of a workspace's spend can be read (from the
-- open holds, which holds_open_by_expiry already lists: no index of their own to keep up per Admit).
ALTER TABLE holds
  ADD COLUMN workspace_id text NOT NULL DEFAULT '',
  ADD COLUMN agent text NOT NULL DEFAULT '';

-- The highest whole percentage of the limit announced in a threshold event for this row (its
-- window), and the limit it was a percentage of: a changed limit starts the count again.
ALTER TABLE spend_counters
  ADD COLUMN announced_percent integer NOT NULL DEFAULT 0,
  ADD COLUMN announced_limit_nanodollars bigint;

-- Every finished request, summed per organisation, workspace, agent and UTC day ('' for none):
-- workspace rows' spend this month, the agents list, and the spend a budget set later finds
-- already made in its window. List price; the BYOK part kept apart for budgets that exclude it.
CREATE TABLE usage_days (
  org_id text NOT NULL,
  workspace_id text NOT NULL,
  agent text NOT NULL,
  day date NOT NULL,
  requests bigint NOT NULL,
  list_spend_nanodollars bigint NOT NULL,
  byok_list_spend_nanodollars bigint NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (org_id, workspace_id, agent, day)
);
CREATE INDEX usage_days_by_agent ON usage_days (org_id, agent, day) WHERE agent <> '';

-- Requests already summed into usage_days, so a batch the gateway sends again counts once. Kept
-- only as long as a resend can arrive (pruned by the sweep).
CREATE TABLE recorded_requests (
  request_id text PRIMARY KEY,
  recorded_at timestamptz NOT NULL
);
CREATE INDEX recorded_requests_by_time ON recorded_requests (recorded_at);

-- Threshold crossings waiting to be published (an outbox written in the settlement's own
-- transaction, so a crossing is never lost and never slows the settlement down).
CREATE TABLE threshold_crossings (
  crossing_id text PRIMARY KEY,
  org_id text NOT NULL,
  subject_kind text NOT NULL,
  subject_id text NOT NULL,
  subject_name text NOT NULL,
  workspace_id text NOT NULL,
  window_kind text NOT NULL,
  window_start timestamptz NOT NULL,
  percent integer NOT NULL,
  previous_percent integer NOT NULL,
  hard boolean NOT NULL,
  limit_nanodollars bigint NOT NULL,
  usage_nanodollars bigint NOT NULL,
  request_id text NOT NULL,
  crossed_at timestamptz NOT NULL,
  -- A publisher took it until then (another replica may take it over after that).
  claimed_until timestamptz,
  published_at timestamptz
);
CREATE INDEX threshold_crossings_unpublished ON threshold_crossings (crossed_at) WHERE published_at IS NULL;

-- admit_on_counters() (repeatable/admit_on_counters.sql) now admits on any number of counter rows.
-- admit_on_counter(), its one-row predecessor, is no longer called; it stays for replicas of the
-- previous release while a rollout runs, and a later migration drops it.
