-- The ids a model's author serves it by (`claude-sonnet-4-5-20250929`, `gpt-4o-mini`): a request
-- naming one is routed to the model. The catalog import refuses an alias that is another model's id
-- or alias, so every name means one model.
ALTER TABLE models ADD COLUMN aliases jsonb NOT NULL DEFAULT '[]'::jsonb;
