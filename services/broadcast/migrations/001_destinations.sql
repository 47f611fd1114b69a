-- Broadcast destinations (spec doc 1): where a metadata record or a span of every completed request
-- goes. Secrets are sealed (AES-256-GCM envelopes under ROUTER_MASTER_KEY, stored as JSON with
-- base64 fields): the webhook signing secret, and an otlp destination's one header value, of which
-- only the last four characters are kept in clear (`header_hint`).
CREATE TABLE destinations (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('webhook', 'otlp')),
  url text NOT NULL,
  name text,
  sample_rate double precision NOT NULL DEFAULT 1 CHECK (sample_rate >= 0 AND sample_rate <= 1),
  disabled boolean NOT NULL DEFAULT false,
  header_name text,
  header_hint text,
  header_value_sealed jsonb,
  signing_secret_sealed jsonb,
  last_attempt_at timestamptz,
  last_success_at timestamptz,
  last_http_status integer,
  last_error text,
  created_at timestamptz NOT NULL
);
CREATE INDEX destinations_by_org ON destinations (org_id, created_at, id);

-- Completed-request events already fanned out, so a redelivered or replayed event (same event id,
-- or the same request under another id) is never broadcast twice. Pruned after the retention.
CREATE TABLE handled_events (
  event_id text PRIMARY KEY,
  request_id text NOT NULL UNIQUE,
  handled_at timestamptz NOT NULL
);
CREATE INDEX handled_events_by_age ON handled_events (handled_at);
