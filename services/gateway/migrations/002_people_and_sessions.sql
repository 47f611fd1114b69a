-- People and sign-in: users, their seats in organisations (members), invitations, dashboard
-- sessions, PKCE authorization codes, wallet challenges, and each organisation's input/output
-- logging settings. Secrets (session tokens, invitation tokens, PKCE codes) are stored only as
-- their SHA-256; the plaintext goes to the client once.

ALTER TABLE organisations ADD COLUMN plan text NOT NULL DEFAULT 'standard';

CREATE TABLE users (
  id               text PRIMARY KEY,
  name             text,
  email            text,
  avatar_url       text,
  -- How the person signs in: an identity provider's slug, or 'wallet'.
  provider         text NOT NULL,
  -- The provider's subject (`sub`), or the wallet address lower-cased.
  provider_subject text NOT NULL,
  created_at       timestamptz NOT NULL,
  UNIQUE (provider, provider_subject)
);

-- A seat: one person in one organisation with one role. Removing the seat deletes the row.
CREATE TABLE members (
  org_id     text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'billing', 'readonly')),
  joined_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

-- A management key created by a signed-in person acts with that person's current role, and is
-- revoked when the person's seat is removed. NULL: a key with no person behind it (full power).
ALTER TABLE keys ADD COLUMN user_id text REFERENCES users (id);
CREATE INDEX keys_user_idx ON keys (org_id, user_id) WHERE user_id IS NOT NULL;

CREATE TABLE invitations (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  role             text NOT NULL CHECK (role IN ('owner', 'member', 'billing')),
  token_hash       text NOT NULL UNIQUE,
  created_by_user  text REFERENCES users (id) ON DELETE SET NULL,
  created_by_name  text,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  accepted_at      timestamptz,
  accepted_by      text REFERENCES users (id) ON DELETE SET NULL,
  revoked_at       timestamptz
);
CREATE INDEX invitations_open_idx ON invitations (org_id, created_at DESC)
  WHERE accepted_at IS NULL AND revoked_at IS NULL;

CREATE TABLE sessions (
  token_hash   text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  -- The signed-in person; NULL for a session exchanged from a key with no person behind it.
  user_id      text REFERENCES users (id) ON DELETE CASCADE,
  -- The management key exchanged for this session, if any: revoking it ends the session.
  key_hash     text REFERENCES keys (hash),
  auth_method  text NOT NULL CHECK (auth_method IN ('management_key', 'oauth', 'wallet', 'invitation')),
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz
);
CREATE INDEX sessions_key_idx ON sessions (key_hash) WHERE key_hash IS NOT NULL;
CREATE INDEX sessions_user_idx ON sessions (user_id, org_id) WHERE user_id IS NOT NULL;

CREATE TABLE pkce_codes (
  code_hash          text PRIMARY KEY,
  org_id             text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id            text REFERENCES users (id) ON DELETE CASCADE,
  workspace_id       text REFERENCES workspaces (id) ON DELETE SET NULL,
  callback_url       text,
  code_challenge     text NOT NULL,
  key_label          text NOT NULL,
  limit_nanodollars  bigint NOT NULL,
  expires_in_days    integer NOT NULL,
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  consumed_at        timestamptz
);

CREATE TABLE wallet_challenges (
  nonce       text PRIMARY KEY,
  address     text NOT NULL,
  message     text NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);

CREATE TABLE logging_settings (
  org_id          text PRIMARY KEY REFERENCES organisations (id) ON DELETE CASCADE,
  enabled         boolean NOT NULL DEFAULT false,
  key_include     jsonb NOT NULL DEFAULT '[]'::jsonb,
  key_exclude     jsonb NOT NULL DEFAULT '[]'::jsonb,
  retention_days  integer NOT NULL DEFAULT 90 CHECK (retention_days >= 90),
  locked          boolean NOT NULL DEFAULT false,
  purposes        jsonb NOT NULL DEFAULT '["self_access"]'::jsonb,
  consented_at    timestamptz,
  updated_at      timestamptz NOT NULL
);
