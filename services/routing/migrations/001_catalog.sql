-- The model catalog: providers, models, the endpoints that serve them, and every list price an
-- endpoint has had. Rows missing from a later import are kept with active = false so that price
-- history and endpoint ids recorded elsewhere stay meaningful.

CREATE TABLE providers (
  slug               text PRIMARY KEY,
  name               text NOT NULL,
  hq_country         text,
  datacenters        jsonb,
  privacy_policy_url text,
  tos_url            text,
  status_page_url    text,
  api_family         text NOT NULL CHECK (api_family IN ('openai', 'anthropic', 'google')),
  base_url           text NOT NULL,
  self_hosted        boolean NOT NULL DEFAULT false,
  active             boolean NOT NULL DEFAULT true,
  updated_at         timestamptz NOT NULL
);

CREATE TABLE models (
  id                   text PRIMARY KEY,
  canonical_slug       text NOT NULL,
  name                 text NOT NULL,
  created              bigint,
  description          text,
  context_length       integer,
  architecture         jsonb,
  supported_parameters jsonb,
  default_parameters   jsonb,
  resale_permitted     text NOT NULL CHECK (resale_permitted IN ('yes', 'no', 'via_reseller', 'unknown')),
  byok_only            boolean NOT NULL,
  is_free              boolean NOT NULL,
  deprecation_date     text,
  active               boolean NOT NULL DEFAULT true,
  updated_at           timestamptz NOT NULL
);

CREATE TABLE endpoints (
  id                   text PRIMARY KEY,
  model_id             text NOT NULL REFERENCES models (id),
  provider_slug        text NOT NULL REFERENCES providers (slug),
  upstream_model       text NOT NULL,
  context_length       integer NOT NULL,
  max_output_tokens    integer,
  quantization         text,
  supported_parameters jsonb NOT NULL,
  -- Set in the same transaction that inserts the endpoint; see price_versions.
  price_version_id     bigint,
  active               boolean NOT NULL DEFAULT true,
  updated_at           timestamptz NOT NULL
);

CREATE INDEX endpoints_model_idx ON endpoints (model_id);

-- Money is nanodollars per million tokens. A null cached price means "same as prompt".
CREATE TABLE price_versions (
  id                        bigserial PRIMARY KEY,
  endpoint_id               text NOT NULL REFERENCES endpoints (id),
  prompt_per_million        bigint NOT NULL CHECK (prompt_per_million >= 0),
  completion_per_million    bigint NOT NULL CHECK (completion_per_million >= 0),
  cached_prompt_per_million bigint CHECK (cached_prompt_per_million >= 0),
  effective_from            timestamptz NOT NULL
);

CREATE INDEX price_versions_endpoint_idx ON price_versions (endpoint_id, id);

ALTER TABLE endpoints
  ADD CONSTRAINT endpoints_price_version_fk FOREIGN KEY (price_version_id) REFERENCES price_versions (id);

-- One row per import; the newest id is the catalog revision that in-memory caches compare.
CREATE TABLE catalog_imports (
  id                   bigserial PRIMARY KEY,
  imported_at          timestamptz NOT NULL,
  sha256               text NOT NULL,
  providers_changed    integer NOT NULL,
  models_changed       integer NOT NULL,
  endpoints_changed    integer NOT NULL,
  price_versions_added integer NOT NULL,
  deactivated          integer NOT NULL
);
