-- The clouds enterprises buy models through. Bedrock's Converse API is a wire format of its own
-- ("bedrock"), and one cloud serves several formats: Claude on Bedrock and on Vertex AI speaks
-- Anthropic's Messages body. An endpoint's own api_family, when set, wins over its provider's.
ALTER TABLE providers DROP CONSTRAINT IF EXISTS providers_api_family_check;
ALTER TABLE providers ADD CONSTRAINT providers_api_family_check
  CHECK (api_family IN ('openai', 'anthropic', 'google', 'bedrock'));
ALTER TABLE endpoints ADD COLUMN api_family text
  CHECK (api_family IS NULL OR api_family IN ('openai', 'anthropic', 'google', 'bedrock'));
