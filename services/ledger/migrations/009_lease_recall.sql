-- The open leases: what usage reads and Admit's wait for leases (src/holds/admission.ts) sum the
-- unspent headroom of. They are few at any moment, against every hold ever placed.
CREATE INDEX holds_open_leases ON holds (created_at) WHERE is_lease AND state = 'held';

-- A lease an Admit waits for (its unspent headroom alone takes a shared budget to its limit): the
-- next CloseHolds call of its gateway answers it as recalled, and the gateway retires it at once.
ALTER TABLE holds ADD COLUMN recalled boolean NOT NULL DEFAULT false;
