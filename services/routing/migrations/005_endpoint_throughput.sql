-- Throughput per endpoint: the completion tokens of the attempts that served a request and the time
-- they spent generating (after the first token when the gateway measured one), so `sort: throughput`
-- and the `:nitro` variant can order endpoints by tokens per second over the last 24 h.

ALTER TABLE endpoint_health_buckets
  ADD COLUMN output_tokens_sum bigint NOT NULL DEFAULT 0,
  ADD COLUMN generation_ms_sum bigint NOT NULL DEFAULT 0;
