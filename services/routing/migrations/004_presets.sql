-- Presets: named, versioned request settings per organisation, referenced in a request's `model`
-- as `@preset/<slug>` (current version) or `@preset/<slug>@<version>`. Every change adds a version;
-- versions are never edited; a revert adds a version holding an old body. Deleting a preset removes
-- its history with it.

CREATE TABLE presets (
  org_id          text NOT NULL,
  slug            text NOT NULL CHECK (slug ~ '^[a-z0-9-]{1,64}$'),
  name            text NOT NULL,
  description     text,
  current_version integer NOT NULL CHECK (current_version >= 1),
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  PRIMARY KEY (org_id, slug)
);

CREATE TABLE preset_versions (
  org_id     text NOT NULL,
  slug       text NOT NULL,
  version    integer NOT NULL CHECK (version >= 1),
  -- The settings only (model, models, temperature, top_p, top_k, max_tokens, seed, provider,
  -- reasoning, routing_stability), validated before they are stored.
  body       jsonb NOT NULL,
  note       text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, slug, version),
  FOREIGN KEY (org_id, slug) REFERENCES presets (org_id, slug) ON DELETE CASCADE
);
