-- What an endpoint declares about the data it is sent, for the privacy filters of Plan
-- (`provider.zdr`, `provider.data_collection`, the privacy policy and guardrails). Undeclared is
-- false / null, so every such filter fails closed on an endpoint that says nothing.

ALTER TABLE endpoints
  ADD COLUMN zdr               boolean NOT NULL DEFAULT false,
  ADD COLUMN no_training       boolean NOT NULL DEFAULT false,
  ADD COLUMN deployment_region text;
