-- Every request the rollups have counted, by generation id. The rollups change only in the
-- statement that first inserts a request here, so a redelivered or replayed event changes nothing.
CREATE TABLE counted_requests (
  request_id text PRIMARY KEY,
  org_id text NOT NULL,
  workspace_id text NOT NULL,
  -- The UTC month the request falls in (its first day).
  month date NOT NULL,
  counted_at timestamptz NOT NULL
);

-- Monthly per-workspace rollups, one row per (workspace, UTC month, dimension, key):
--   dimension 'model': key is the model that served ('' when none did),
--   dimension 'agent': key is the agent name ('' for requests that named none),
--   dimension 'day':   key is the UTC date, YYYY-MM-DD.
-- Each dimension partitions the month's requests, so each one's rows add up to the month.
-- Money is list price in bigint nanodollars.
CREATE TABLE rollups (
  org_id text NOT NULL,
  workspace_id text NOT NULL,
  month date NOT NULL,
  dimension text NOT NULL CHECK (dimension IN ('model', 'agent', 'day')),
  key text NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  complete_requests bigint NOT NULL DEFAULT 0,
  error_requests bigint NOT NULL DEFAULT 0,
  refused_requests bigint NOT NULL DEFAULT 0,
  cancelled_requests bigint NOT NULL DEFAULT 0,
  prompt_tokens bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  cached_tokens bigint NOT NULL DEFAULT 0,
  reasoning_tokens bigint NOT NULL DEFAULT 0,
  list_cost_nanodollars bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, workspace_id, month, dimension, key)
);

-- The name a workspace carried on its latest request of a month (events carry the name at request
-- time; the gateway supplies the current one when a report is read).
CREATE TABLE workspace_months (
  org_id text NOT NULL,
  workspace_id text NOT NULL,
  month date NOT NULL,
  name text NOT NULL,
  name_seen_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, workspace_id, month)
);

-- One organisation's report branding; absent fields are null (the organisation's name stands in).
CREATE TABLE branding (
  org_id text PRIMARY KEY,
  brand_name text,
  -- A canonical `data:image/png;base64,...` or `data:image/jpeg;base64,...` URI, checked by its bytes.
  brand_logo text,
  brand_footer text,
  updated_at timestamptz NOT NULL,
  updated_by text
);
