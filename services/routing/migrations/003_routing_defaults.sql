-- Account routing defaults: one row per organisation, written whole by PUT /v1/routing/defaults.
-- An organisation without a row has never set them (no default model, no fallbacks, no sort).
-- Model ids are not foreign keys: a later catalog import may deactivate a model an account still
-- names, and Plan then reports it as unresolved rather than the row disappearing.

CREATE TABLE routing_defaults (
  org_id          text PRIMARY KEY,
  default_model   text,
  -- Catalog model ids in the order they are tried after the request's own models.
  fallback_models jsonb NOT NULL DEFAULT '[]'::jsonb,
  default_sort    text CHECK (default_sort IN ('price', 'throughput', 'latency')),
  lock_sort       boolean NOT NULL DEFAULT false,
  updated_at      timestamptz NOT NULL,
  CHECK (NOT lock_sort OR default_sort IS NOT NULL)
);
