-- Which format a request came in by (chat_completions, responses, anthropic_messages); null on
-- requests recorded before the gateway said so, which all came in by chat completions.
ALTER TABLE requests ADD COLUMN IF NOT EXISTS ingress text;
