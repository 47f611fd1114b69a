-- Durable settlement. The ledger settles finished requests from router.request.completed.v1 (the
-- gateway's event, on the bus), so a gateway's crash loses no served spend; gateways renew the holds
-- of their running requests, and a hold whose gateway stopped renewing it expires as lost: charged
-- at what it covered.
--
-- What a lease covers as its gateway last reported it (LeaseCover, a trim): the worst case of its
-- running requests and what its finished requests spent. A lease's reservation beyond that is
-- unspent headroom, which usage reads leave out; an expired lease is charged its running requests.
ALTER TABLE holds
  ADD COLUMN covered_in_flight_nanodollars bigint NOT NULL DEFAULT 0,
  ADD COLUMN covered_spent_nanodollars bigint NOT NULL DEFAULT 0;

-- close_holds() takes the gateway's count of a lease's spends with a trim (p_spent): the new
-- signature is created by repeatable/close_holds.sql, the old one dropped so one remains. A replica
-- of the previous release calls it without p_spent, which the default covers.
DROP FUNCTION IF EXISTS close_holds(text[], text[], timestamptz[], bigint[], bigint[], text[], bigint[], timestamptz[]);
