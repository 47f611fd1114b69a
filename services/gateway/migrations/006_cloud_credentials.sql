-- Cloud provider credentials (Azure OpenAI, Amazon Bedrock, Google Vertex AI) are documents, sealed
-- whole like a key. `settings` is the part a route may show: endpoint, region, project, deployments.
ALTER TABLE provider_credentials ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb;
