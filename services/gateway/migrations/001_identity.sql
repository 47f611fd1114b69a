-- Identity side of the gateway: organisations, their workspaces, API keys and BYOK provider
-- credentials. Runs on Postgres 15 and PGlite; table names are unqualified (search_path).

CREATE TABLE organisations (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  slug        text NOT NULL UNIQUE,
  operator    boolean NOT NULL DEFAULT false,
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

-- A key is identified by the hex HMAC-SHA256 of its plaintext under ROUTER_KEY_PEPPER; the
-- plaintext itself is never stored.
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
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL
);
CREATE INDEX keys_org_idx ON keys (org_id, created_at DESC);
CREATE INDEX keys_workspace_idx ON keys (workspace_id);

-- The provider key is sealed with AES-256-GCM under a per-credential data key; the data key is
-- itself sealed (wrapped) under a key derived from ROUTER_MASTER_KEY. kek_version allows rotation.
CREATE TABLE provider_credentials (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  provider_slug    text NOT NULL,
  name             text,
  key_hint         text NOT NULL,
  key_ciphertext   bytea NOT NULL,
  key_iv           bytea NOT NULL,
  key_tag          bytea NOT NULL,
  dek_ciphertext   bytea NOT NULL,
  dek_iv           bytea NOT NULL,
  dek_tag          bytea NOT NULL,
  kek_version      smallint NOT NULL DEFAULT 1,
  tier             text NOT NULL DEFAULT 'prioritized' CHECK (tier IN ('prioritized', 'fallback')),
  priority         integer NOT NULL DEFAULT 0,
  fallback_policy  text NOT NULL DEFAULT 'platform'
                     CHECK (fallback_policy IN ('platform', 'none_for_models', 'none_for_provider')),
  model_filter     jsonb NOT NULL DEFAULT '{}'::jsonb,
  disabled         boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL,
  last_used_at     timestamptz
);
CREATE INDEX provider_credentials_org_idx ON provider_credentials (org_id, created_at);
