-- Each organisation's privacy policy (absent: everything off). Replaced whole on every write.

CREATE TABLE privacy_policies (
  org_id        text PRIMARY KEY,
  zdr           boolean NOT NULL,
  zdr_groups    jsonb NOT NULL,
  deny_training boolean NOT NULL,
  regions       jsonb NOT NULL,
  updated_at    timestamptz NOT NULL
);
