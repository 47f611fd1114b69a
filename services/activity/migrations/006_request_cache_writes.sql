-- Prompt tokens the provider wrote to its cache, by how long they stay (Anthropic prices 5-minute
-- writes at 1.25x and 1-hour writes at 2x the prompt price); subsets of prompt_tokens, apart from
-- cached_tokens (reads). Rows recorded before the events carried them have 0.
ALTER TABLE requests
  ADD COLUMN IF NOT EXISTS cache_write_5m_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS cache_write_1h_tokens integer NOT NULL DEFAULT 0;
