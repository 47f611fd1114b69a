-- An organisation's content-logging settings (services/console/README.md). The gateway reads the
-- keys it must keep no content of (`key_exclude`) over gRPC (ConsoleService.LoggingSettings).
CREATE TABLE logging_settings (
  org_id          text PRIMARY KEY,
  enabled         boolean NOT NULL DEFAULT false,
  key_include     jsonb NOT NULL DEFAULT '[]'::jsonb,
  key_exclude     jsonb NOT NULL DEFAULT '[]'::jsonb,
  retention_days  integer NOT NULL DEFAULT 90 CHECK (retention_days >= 90),
  locked          boolean NOT NULL DEFAULT false,
  purposes        jsonb NOT NULL DEFAULT '["self_access"]'::jsonb,
  consented_at    timestamptz,
  updated_at      timestamptz NOT NULL
);

-- The settings the gateway kept before come along; its table is left unwritten and dropped by a
-- later release.
DO $$
BEGIN
  IF to_regclass('gateway.logging_settings') IS NOT NULL THEN
    INSERT INTO logging_settings (org_id, enabled, key_include, key_exclude, retention_days, locked, purposes, consented_at, updated_at)
    SELECT org_id, enabled, key_include, key_exclude, retention_days, locked, purposes, consented_at, updated_at
    FROM gateway.logging_settings
    ON CONFLICT (org_id) DO NOTHING;
  END IF;
END $$;
