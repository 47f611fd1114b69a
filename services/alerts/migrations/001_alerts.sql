-- Usage-alert channels (spec doc 1). A webhook's signing secret is sealed (libs/sealing, one text
-- value) and never returned after creation; chat and email channels have none.
CREATE TABLE channels (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('webhook', 'chat', 'email')),
  target text NOT NULL,
  name text,
  thresholds integer[] NOT NULL,
  disabled boolean NOT NULL DEFAULT false,
  signing_secret_sealed text,
  created_at timestamptz NOT NULL
);
CREATE INDEX channels_by_org ON channels (org_id, created_at, id);

-- Every delivery attempt (spec doc 1, Alert delivery record), kept 90 days. The channel's name and
-- kind are copied so the row still reads once the channel is removed (channel_id then null).
CREATE TABLE deliveries (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  channel_id text REFERENCES channels (id) ON DELETE SET NULL,
  channel_name text,
  channel_kind text NOT NULL,
  event text NOT NULL,
  threshold integer,
  status text NOT NULL CHECK (status IN ('sent', 'failed', 'skipped')),
  http_status integer,
  error text,
  key_name text,
  key_hash_prefix text,
  agent_tag text,
  attempts integer NOT NULL,
  duration_ms integer NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX deliveries_newest_by_org ON deliveries (org_id, created_at DESC, id DESC);
CREATE INDEX deliveries_by_age ON deliveries (created_at);

-- One row per threshold announced on a channel for a subject's ceiling window: a threshold is
-- announced once per window, however often the event that crossed it is delivered or replayed.
CREATE TABLE threshold_announcements (
  channel_id text NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  subject_kind text NOT NULL,
  subject text NOT NULL,
  -- Agent budgets of one agent differ by workspace ('' for the organisation-wide budget).
  workspace_id text NOT NULL,
  window_name text NOT NULL,
  window_start timestamptz NOT NULL,
  threshold integer NOT NULL,
  crossing_id text NOT NULL,
  announced_at timestamptz NOT NULL,
  PRIMARY KEY (channel_id, subject_kind, subject, workspace_id, window_name, window_start, threshold)
);
CREATE INDEX threshold_announcements_by_age ON threshold_announcements (announced_at);

-- Events already acted on, by bus event id and by the event's own id (crossing_id, flag_id): a
-- redelivery or a republished copy under a new event id changes nothing.
CREATE TABLE handled_events (
  event_id text PRIMARY KEY,
  source_id text NOT NULL UNIQUE,
  topic text NOT NULL,
  handled_at timestamptz NOT NULL
);
CREATE INDEX handled_events_by_age ON handled_events (handled_at);
