-- Endpoint health learned from router.request.completed.v1: per endpoint, per 5-minute bucket
-- (UTC, aligned to the epoch), what the gateway's attempts against it came to. Counted attempts are
-- those that say something about the endpoint (see src/health/attempt-outcome.ts); a caller's own
-- 4xx or a cancelled request is left out. Buckets older than 24 h are pruned.

CREATE TABLE endpoint_health_buckets (
  endpoint_id     text NOT NULL,
  bucket_start    timestamptz NOT NULL,
  attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  failures        integer NOT NULL DEFAULT 0 CHECK (failures >= 0 AND failures <= attempts),
  -- Attempt durations (ms) over the attempts that reported one.
  duration_sum_ms bigint NOT NULL DEFAULT 0,
  duration_count  integer NOT NULL DEFAULT 0,
  -- Time to first token (ms) over the attempts that reported one.
  ttft_sum_ms     bigint NOT NULL DEFAULT 0,
  ttft_count      integer NOT NULL DEFAULT 0,
  PRIMARY KEY (endpoint_id, bucket_start)
);

CREATE INDEX endpoint_health_buckets_start_idx ON endpoint_health_buckets (bucket_start);

-- Ids of events this service has consumed, inserted in the same transaction as their effect so
-- that a redelivered event changes nothing. Kept longer than the buckets (see pruneHealth).
CREATE TABLE processed_events (
  event_id     text PRIMARY KEY,
  processed_at timestamptz NOT NULL
);

CREATE INDEX processed_events_at_idx ON processed_events (processed_at);
