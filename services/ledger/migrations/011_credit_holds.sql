-- Credit holds. While the operator charges a fee on requests, Admit holds each request's fee on its
-- worst case against the organisation's balance (credit_balances.held_nanodollars); the request's
-- record settles it to the fee on its actual list cost (recordRequests, once per request id).
--
-- expired: the request's gateway never reported it within the hold's lifetime; the sweep charged
-- the held amount, and a late record replaces that charge with the actual fee. Expired rows are
-- pruned with the record of recorded requests.
CREATE TABLE credit_holds (
  request_id text PRIMARY KEY,
  org_id text NOT NULL,
  amount_nanodollars bigint NOT NULL CHECK (amount_nanodollars > 0),
  expired boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE INDEX credit_holds_open_by_expiry ON credit_holds (expires_at) WHERE NOT expired;
