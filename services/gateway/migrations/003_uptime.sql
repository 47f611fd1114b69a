-- Uptime as measured from outside: the probes (`router probe`, one per region) call /health every
-- minute and count each result here, one row per UTC day and region. Counters rather than one row
-- per probe: 90 days of four regions stay 360 rows.
CREATE TABLE uptime_days (
  day date NOT NULL,
  region text NOT NULL,
  probes integer NOT NULL DEFAULT 0,
  up integer NOT NULL DEFAULT 0,
  PRIMARY KEY (day, region)
);
