-- Guardrails: per-organisation restrictions that take effect when assigned to a key (by hash) or a
-- member (by user id). Routing enforces the model, provider, region and ZDR parts in Plan; the
-- budget and content-filter parts are stored for the ledger and the content filter.

CREATE TABLE guardrails (
  id                      text PRIMARY KEY,
  org_id                  text NOT NULL,
  name                    text NOT NULL,
  allowed_models          jsonb NOT NULL,
  allowed_providers       jsonb NOT NULL,
  allowed_data_regions    jsonb NOT NULL,
  enforce_zdr             jsonb NOT NULL,
  budget_nanodollars      bigint CHECK (budget_nanodollars >= 0),
  budget_reset            text,
  include_byok_in_budgets boolean NOT NULL,
  content_filter_builtins jsonb NOT NULL,
  content_filters         jsonb NOT NULL,
  filter_allowlist        jsonb NOT NULL,
  created_at              timestamptz NOT NULL
);

CREATE INDEX guardrails_org_idx ON guardrails (org_id, created_at);

CREATE TABLE guardrail_assignments (
  guardrail_id text NOT NULL REFERENCES guardrails (id) ON DELETE CASCADE,
  org_id       text NOT NULL,
  subject_type text NOT NULL CHECK (subject_type IN ('key', 'member')),
  subject_id   text NOT NULL,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (guardrail_id, subject_type, subject_id)
);

CREATE INDEX guardrail_assignments_org_idx ON guardrail_assignments (org_id);
