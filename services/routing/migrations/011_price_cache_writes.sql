-- Cache-write prices (Anthropic lists 5-minute writes at 1.25x and 1-hour writes at 2x the prompt
-- price). Nanodollars per million tokens; null means "same as prompt", like cached_prompt_per_million.
-- Price versions from before this migration have none, so the next import adds a version for each
-- endpoint whose catalog entry lists one.
ALTER TABLE price_versions
  ADD COLUMN cache_write_5m_per_million bigint CHECK (cache_write_5m_per_million >= 0),
  ADD COLUMN cache_write_1h_per_million bigint CHECK (cache_write_1h_per_million >= 0);
