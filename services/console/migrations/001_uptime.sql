-- Uptime as measured from outside: the probes (`router probe`, one per region) call the gateway's
-- /health every minute and report each result here, one row per UTC day and region. Counters rather
-- than one row per probe: 90 days of four regions stay 360 rows.
CREATE TABLE uptime_days (
  day date NOT NULL,
  region text NOT NULL,
  probes integer NOT NULL DEFAULT 0,
  up integer NOT NULL DEFAULT 0,
  PRIMARY KEY (day, region)
);

-- The counts the gateway kept before this service existed come along (expand, then contract: the
-- gateway's table is left unwritten and is dropped by a later release). Migrations run as the
-- schemas' owner, which may read both.
DO $$
BEGIN
  IF to_regclass('gateway.uptime_days') IS NOT NULL THEN
    INSERT INTO uptime_days (day, region, probes, up)
    SELECT day, region, probes, up FROM gateway.uptime_days
    ON CONFLICT (day, region) DO NOTHING;
  END IF;
END $$;
