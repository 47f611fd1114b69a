-- Identity moves from the gateway to the console: organisations and their workspaces, people and
-- their seats, invitations, dashboard sessions and the sign-in state (PKCE codes, wallet
-- challenges), API keys as resources, and the runaway flags already applied to keys. They are tied
-- by foreign keys and move together. The gateway authenticates from a cache of key and session
-- records it asks the console for (ConsoleService.FindKey / FindSession).
CREATE TABLE organisations (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  slug        text NOT NULL UNIQUE,
  operator    boolean NOT NULL DEFAULT false,
  plan        text NOT NULL DEFAULT 'standard',
  created_at  timestamptz NOT NULL
);

CREATE TABLE workspaces (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name        text NOT NULL,
  slug        text NOT NULL,
  created_at  timestamptz NOT NULL,
  UNIQUE (org_id, slug)
);
CREATE INDEX workspaces_org_idx ON workspaces (org_id, created_at);

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

CREATE TABLE members (
  org_id     text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'billing', 'readonly')),
  joined_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

CREATE TABLE keys (
  hash                   text PRIMARY KEY,
  prefix                 text NOT NULL,
  org_id                 text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  workspace_id           text REFERENCES workspaces (id),
  name                   text,
  label                  text,
  class                  text NOT NULL CHECK (class IN ('inference', 'management')),
  limit_nanodollars      bigint CHECK (limit_nanodollars IS NULL OR limit_nanodollars >= 0),
  limit_reset            text CHECK (limit_reset IN ('daily', 'weekly', 'monthly', 'lifetime')),
  limit_mode             text NOT NULL DEFAULT 'hard' CHECK (limit_mode IN ('hard', 'soft')),
  include_byok_in_limit  boolean NOT NULL DEFAULT false,
  paused                 boolean NOT NULL DEFAULT false,
  paused_reason          text CHECK (paused_reason IN ('runaway', 'manual')),
  disabled               boolean NOT NULL DEFAULT false,
  expires_at             timestamptz,
  external_user          text,
  user_id                text REFERENCES users (id),
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL
);
CREATE INDEX keys_org_idx ON keys (org_id, created_at DESC);
CREATE INDEX keys_workspace_idx ON keys (workspace_id);
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

-- Runaway flags already applied to keys: a flag delivered twice pauses nothing twice.
CREATE TABLE runaway_pauses (
  flag_id     text PRIMARY KEY,
  org_id      text NOT NULL,
  key_hash    text NOT NULL,
  applied_at  timestamptz NOT NULL
);

-- The gateway's rows come along in foreign-key order (`router migrate` and `npm start` run the
-- gateway's migrations first). Its tables are left unwritten and are dropped by a later release.
DO $$
BEGIN
  IF to_regclass('gateway.keys') IS NOT NULL THEN
    INSERT INTO organisations (id, name, slug, operator, plan, created_at)
      SELECT id, name, slug, operator, plan, created_at FROM gateway.organisations;
    INSERT INTO workspaces (id, org_id, name, slug, created_at)
      SELECT id, org_id, name, slug, created_at FROM gateway.workspaces;
    INSERT INTO users (id, name, email, avatar_url, provider, provider_subject, created_at)
      SELECT id, name, email, avatar_url, provider, provider_subject, created_at FROM gateway.users;
    INSERT INTO members (org_id, user_id, role, joined_at)
      SELECT org_id, user_id, role, joined_at FROM gateway.members;
    INSERT INTO keys (hash, prefix, org_id, workspace_id, name, label, class, limit_nanodollars, limit_reset,
      limit_mode, include_byok_in_limit, paused, paused_reason, disabled, expires_at, external_user, user_id,
      created_at, updated_at)
      SELECT hash, prefix, org_id, workspace_id, name, label, class, limit_nanodollars, limit_reset,
        limit_mode, include_byok_in_limit, paused, paused_reason, disabled, expires_at, external_user, user_id,
        created_at, updated_at FROM gateway.keys;
    INSERT INTO invitations (id, org_id, role, token_hash, created_by_user, created_by_name, created_at,
      expires_at, accepted_at, accepted_by, revoked_at)
      SELECT id, org_id, role, token_hash, created_by_user, created_by_name, created_at,
        expires_at, accepted_at, accepted_by, revoked_at FROM gateway.invitations;
    INSERT INTO sessions (token_hash, org_id, user_id, key_hash, auth_method, created_at, expires_at, ended_at)
      SELECT token_hash, org_id, user_id, key_hash, auth_method, created_at, expires_at, ended_at FROM gateway.sessions;
    INSERT INTO pkce_codes (code_hash, org_id, user_id, workspace_id, callback_url, code_challenge, key_label,
      limit_nanodollars, expires_in_days, created_at, expires_at, consumed_at)
      SELECT code_hash, org_id, user_id, workspace_id, callback_url, code_challenge, key_label,
        limit_nanodollars, expires_in_days, created_at, expires_at, consumed_at FROM gateway.pkce_codes;
    INSERT INTO wallet_challenges (nonce, address, message, created_at, expires_at, used_at)
      SELECT nonce, address, message, created_at, expires_at, used_at FROM gateway.wallet_challenges;
    INSERT INTO runaway_pauses (flag_id, org_id, key_hash, applied_at)
      SELECT flag_id, org_id, key_hash, applied_at FROM gateway.runaway_pauses;
  END IF;
END $$;
