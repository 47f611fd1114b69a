-- Labels of the content-filter detectors that matched a request's messages (blocked, redacted or
-- flagged), as the gateway reported them; never the matched text.
ALTER TABLE requests ADD COLUMN content_filter_labels jsonb NOT NULL DEFAULT '[]'::jsonb;
