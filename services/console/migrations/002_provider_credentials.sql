-- Provider credentials (BYOK): the organisation's own provider keys and cloud accounts, each sealed
-- whole under the master key (envelope encryption). The console owns them as resources; the gateway
-- reads an organisation's enabled ones over gRPC (ConsoleService.OrganisationCredentials) and opens
-- them itself.
CREATE TABLE provider_credentials (
  id               text PRIMARY KEY,
  org_id           text NOT NULL,
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
  -- A cloud credential's showable part (endpoint, region, project, deployments); `{}` for an API key.
  settings         jsonb NOT NULL DEFAULT '{}'::jsonb,
  disabled         boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL,
  last_used_at     timestamptz
);
CREATE INDEX provider_credentials_org_idx ON provider_credentials (org_id, created_at);

-- The credentials the gateway kept before come along, sealed as they were (the sealing context is
-- the organisation and the credential's id, both kept). The gateway's table is left unwritten and is
-- dropped by a later release.
DO $$
BEGIN
  IF to_regclass('gateway.provider_credentials') IS NOT NULL THEN
    INSERT INTO provider_credentials (id, org_id, provider_slug, name, key_hint, key_ciphertext, key_iv, key_tag,
      dek_ciphertext, dek_iv, dek_tag, kek_version, tier, priority, fallback_policy, model_filter, settings,
      disabled, created_at, last_used_at)
    SELECT id, org_id, provider_slug, name, key_hint, key_ciphertext, key_iv, key_tag,
      dek_ciphertext, dek_iv, dek_tag, kek_version, tier, priority, fallback_policy, model_filter, settings,
      disabled, created_at, last_used_at
    FROM gateway.provider_credentials
    ON CONFLICT (id) DO NOTHING;
  END IF;
END $$;
