-- Requests admitted from a lease are explained when their gateway is lost, like a hold's request.
--
-- covered_requests: the lease's running requests as its gateway last reported them (LeaseCover):
-- {"<request id>": {"worst_case": "<nanodollars>", "started_at_ms": <ms>}}. When the lease expires,
-- each whose record has not reached the ledger is lost with the gateway: charged its worst case
-- and recorded (a lease_spends row with lost = true; the ledger publishes its request record).
--
-- gateway_done: the gateway released the lease (it admits nothing more and nothing of it runs) while
-- some of its spends were still on their way; the last of them closes it, so a fully spent lease
-- ends without expiring as lost.
ALTER TABLE holds
  ADD COLUMN covered_requests jsonb NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN gateway_done boolean NOT NULL DEFAULT false;

-- A spend the ledger charged for a request lost with its gateway (its worst case): a late record of
-- the request replaces it with the actual cost, as a late Settle does for an expired hold.
ALTER TABLE lease_spends ADD COLUMN lost boolean NOT NULL DEFAULT false;
