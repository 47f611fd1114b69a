-- One row per generation id: the request record (spec doc 1) with what the single-request read,
-- the generation record, the CSV export and the summaries need. Money is bigint nanodollars.
CREATE TABLE requests (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  key_hash text,
  key_name text,
  key_class text,
  workspace_id text,
  created_at timestamptz NOT NULL,
  requested_model text NOT NULL,
  served_model text,
  provider_slug text,
  endpoint_id text,
  status text NOT NULL,
  finish_reason text,
  native_finish_reason text,
  is_byok boolean NOT NULL DEFAULT false,
  is_cache_hit boolean NOT NULL DEFAULT false,
  cancelled boolean NOT NULL DEFAULT false,
  streamed boolean NOT NULL DEFAULT false,
  quantization text,
  ttft_ms integer,
  generation_ms integer,
  routing_overhead_ms integer,
  error_code text,
  error_message text,
  billed_cost_nanodollars bigint NOT NULL DEFAULT 0,
  list_cost_nanodollars bigint NOT NULL DEFAULT 0,
  prompt_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  reasoning_tokens integer NOT NULL DEFAULT 0,
  -- [{kind, tokens, price_per_million_nanodollars, cost_nanodollars, price_version_id}], amounts as strings.
  usage_lines jsonb NOT NULL DEFAULT '[]'::jsonb,
  price_version_ids bigint[] NOT NULL DEFAULT '{}',
  app_id text,
  app_title text,
  http_referer text,
  app_hidden boolean NOT NULL DEFAULT false,
  app_categories jsonb NOT NULL DEFAULT '[]'::jsonb,
  user_agent text,
  agent text,
  session_id text,
  run_id text,
  recorded_at timestamptz NOT NULL DEFAULT now()
);

-- Newest-first keyset paging per organisation: (created_at, id) < cursor.
CREATE INDEX requests_org_newest ON requests (org_id, created_at DESC, id DESC);
CREATE INDEX requests_org_workspace_newest ON requests (org_id, workspace_id, created_at DESC, id DESC)
  WHERE workspace_id IS NOT NULL;
CREATE INDEX requests_org_session_newest ON requests (org_id, session_id, created_at DESC)
  WHERE session_id IS NOT NULL;

-- One row per dispatch to a provider; several share a request after failover.
CREATE TABLE upstream_attempts (
  id text PRIMARY KEY,
  request_id text NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
  org_id text NOT NULL,
  attempt integer NOT NULL,
  created_at timestamptz NOT NULL,
  model_id text,
  provider_slug text,
  endpoint_id text,
  is_byok boolean NOT NULL DEFAULT false,
  status text NOT NULL CHECK (status IN ('ok', 'error')),
  http_status integer,
  error_code text,
  error_message text,
  duration_ms integer,
  ttft_ms integer,
  UNIQUE (request_id, attempt)
);

CREATE INDEX upstream_attempts_org_newest ON upstream_attempts (org_id, created_at DESC, id DESC);
