-- The organisation's credit balance. `held_nanodollars` is what in-flight requests reserve against
-- it; `credit_line_nanodollars` is how far below zero an enterprise agreement lets it go (0 by
-- default). `purchased_nanodollars` is the lifetime sum of purchases, which request-rate tiers follow.
CREATE TABLE credit_balances (
  org_id text PRIMARY KEY,
  total_nanodollars bigint NOT NULL DEFAULT 0,
  held_nanodollars bigint NOT NULL DEFAULT 0 CHECK (held_nanodollars >= 0),
  credit_line_nanodollars bigint NOT NULL DEFAULT 0 CHECK (credit_line_nanodollars >= 0),
  purchased_nanodollars bigint NOT NULL DEFAULT 0 CHECK (purchased_nanodollars >= 0),
  updated_at timestamptz NOT NULL
);

-- One row per checkout session the payment processor told us about. The unique session id is what
-- makes crediting happen once per paid session however often (or concurrently) its events arrive:
-- only the statement that moves a row to `paid` credits the balance. Only the session id is kept
-- of the processor's records; its invoice or receipt is read from the processor on demand.
CREATE TABLE credit_purchases (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  provider text NOT NULL,
  session_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'failed')),
  gross_nanodollars bigint NOT NULL CHECK (gross_nanodollars >= 0),
  fee_nanodollars bigint NOT NULL CHECK (fee_nanodollars >= 0),
  net_nanodollars bigint NOT NULL CHECK (net_nanodollars >= 0),
  tax_jurisdiction text,
  -- The processor event that last changed the row (its id, for tracing a replay).
  last_event_id text NOT NULL,
  created_at timestamptz NOT NULL,
  paid_at timestamptz,
  UNIQUE (provider, session_id)
);

-- The purchases list: an organisation's, newest first, by keyset.
CREATE INDEX credit_purchases_by_org ON credit_purchases (org_id, created_at DESC, id DESC);
