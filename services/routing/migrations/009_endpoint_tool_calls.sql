-- Tool-call reliability per endpoint: the tool calls in the answers an endpoint served, and how many
-- of them carried arguments that are not a JSON object, over the last 24 h (the catalog's endpoints).

ALTER TABLE endpoint_health_buckets
  ADD COLUMN tool_calls_sum bigint NOT NULL DEFAULT 0,
  ADD COLUMN invalid_tool_calls_sum bigint NOT NULL DEFAULT 0;
