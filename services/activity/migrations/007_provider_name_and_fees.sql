-- The serving provider's display name from the catalog, as the gateway's event carries it; null on
-- rows recorded before events carried it (readers fall back to provider_slug).
ALTER TABLE requests ADD COLUMN IF NOT EXISTS provider_name text;

-- Router's fee per day (the requests' billed cost), beside the list-price spend. Every request before
-- this column was BYOK at a zero fee, so 0 is also the true figure of the rows already summed.
ALTER TABLE daily_totals ADD COLUMN IF NOT EXISTS fee_nanodollars bigint NOT NULL DEFAULT 0;
