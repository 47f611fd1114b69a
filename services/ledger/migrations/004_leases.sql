-- Spend leases. A lease is a hold that reserves a share of its ceilings' headroom for one gateway,
-- which admits many requests from it locally and tells the ledger afterwards what each one spent,
-- so the hot counter row is not locked once per request. `spent_nanodollars` is what those requests
-- have spent so far; what a hold still reserves is worst_case - spent, floored at 0 (an ordinary
-- hold spends nothing, so it reserves its worst case until it is closed).
ALTER TABLE holds
  ADD COLUMN is_lease boolean NOT NULL DEFAULT false,
  ADD COLUMN spent_nanodollars bigint NOT NULL DEFAULT 0;

-- One row per request that spent from a lease. The key makes a spend count once: the gateway sends a
-- batch again when it did not see the answer, and a spend must not be settled twice.
CREATE TABLE lease_spends (
  request_id text PRIMARY KEY,
  hold_id text NOT NULL REFERENCES holds,
  list_cost_nanodollars bigint NOT NULL,
  billed_cost_nanodollars bigint NOT NULL,
  spent_at timestamptz NOT NULL
);

-- A lease's spends (audit), and what a future cleanup of closed holds checks the reference against.
CREATE INDEX lease_spends_by_hold ON lease_spends (hold_id);

-- close_holds() took spends and lease trims here: the new signature is created by
-- repeatable/close_holds.sql; the old one is dropped so a database migrated from 003 keeps one.
DROP FUNCTION IF EXISTS close_holds(text[], text[], timestamptz[], bigint[], bigint[]);
