-- Built-in tools of a request (e.g. OpenAI's web_search) that the serving endpoint could not run,
-- so the gateway sent the request without them, as the gateway reported them.
ALTER TABLE requests ADD COLUMN IF NOT EXISTS dropped_tools jsonb NOT NULL DEFAULT '[]'::jsonb;
