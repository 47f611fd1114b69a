-- The CSV `client`: the name of the key's workspace when the request was made (events carry it
-- from this release on; older rows have none).
ALTER TABLE requests ADD COLUMN workspace_name text;

-- Activity totals per organisation, workspace ('' for none) and UTC day, kept by the consumer in the
-- statement that stores the requests, from the requests that statement inserted: a redelivered
-- event inserts no request, so it adds nothing here either. The summary reads at most
-- 2 x days rows per workspace, however many requests the organisation makes.
CREATE TABLE daily_totals (
  org_id text NOT NULL,
  workspace_key text NOT NULL,
  day date NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  errors bigint NOT NULL DEFAULT 0,
  byok_requests bigint NOT NULL DEFAULT 0,
  -- List price (what activity `spend` measures), nanodollars.
  spend_nanodollars bigint NOT NULL DEFAULT 0,
  prompt_tokens bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  cached_tokens bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, day, workspace_key)
);

-- One row per session of an organisation: when it started and when it was last active, so the
-- conversations list pages by recent activity through an index instead of grouping every request
-- of the window. Per-window figures are read from requests for the sessions of one page only.
CREATE TABLE conversations (
  org_id text NOT NULL,
  session_id text NOT NULL,
  started_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, session_id)
);
CREATE INDEX conversations_org_recent ON conversations (org_id, last_seen_at DESC, session_id DESC);

-- What was recorded before these tables existed.
INSERT INTO daily_totals (org_id, workspace_key, day, requests, errors, byok_requests, spend_nanodollars,
  prompt_tokens, completion_tokens, cached_tokens)
SELECT org_id, coalesce(workspace_id, ''), (created_at AT TIME ZONE 'UTC')::date, count(*),
  count(*) FILTER (WHERE error_code IS NOT NULL), count(*) FILTER (WHERE is_byok), sum(list_cost_nanodollars),
  sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens)
FROM requests
GROUP BY 1, 2, 3;

INSERT INTO conversations (org_id, session_id, started_at, last_seen_at)
SELECT org_id, session_id, min(created_at), max(created_at)
FROM requests
WHERE session_id IS NOT NULL
GROUP BY 1, 2;
