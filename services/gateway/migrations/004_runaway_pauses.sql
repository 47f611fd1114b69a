-- Runaway flags this gateway has applied, by flag id: a redelivered or replayed flag never pauses a
-- key again after someone resumed it.
CREATE TABLE runaway_pauses (
  flag_id text PRIMARY KEY,
  org_id text NOT NULL,
  key_hash text NOT NULL,
  applied_at timestamptz NOT NULL
);
