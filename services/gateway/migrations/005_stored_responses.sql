-- Responses kept for `store` on POST /v1/responses (previous_response_id, item_reference, GET and
-- DELETE /v1/responses/{id}). The answer and the input items it was given are one sealed JSON
-- document (AES-256-GCM under ROUTER_MASTER_KEY, bound to the organisation and the id); only the
-- ids of its output items are in the clear, so an item_reference finds its response by index.
CREATE TABLE stored_responses (
  org_id text NOT NULL,
  id text NOT NULL,
  item_ids text[] NOT NULL,
  sealed text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, id)
);
CREATE INDEX stored_responses_item_ids ON stored_responses USING gin (item_ids);
CREATE INDEX stored_responses_expires_at ON stored_responses (expires_at);
