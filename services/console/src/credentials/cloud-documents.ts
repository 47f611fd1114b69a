import type { providerKeys } from "@router/management-api";

/**
 * What the console keeps beside a sealed cloud credential document (Azure OpenAI, Bedrock, Vertex
 * AI): a hint that names it and the settings a route may show, never how it proves who is calling.
 */

type CloudCredential = providerKeys.CloudCredential;

/** The credential's last four characters of something that names it without being secret. */
export function cloudKeyHint(c: CloudCredential): string {
  const last4 = (s: string | undefined): string => (s && s.length >= 8 ? s.slice(-4) : "");
  switch (c.provider) {
    case "azure":
      return c.api_key ? last4(c.api_key) : last4(c.entra?.client_id);
    case "bedrock":
      return last4(c.access_key_id);
    case "vertex":
      return last4(c.service_account.private_key_id);
  }
}

/** What a route may show of a cloud credential: where it points, never how it proves who it is. */
export function settingsOf(c: CloudCredential): Record<string, unknown> {
  switch (c.provider) {
    case "azure":
      return {
        endpoint: c.endpoint,
        region: c.region,
        api_version: c.api_version,
        deployments: c.deployments,
        auth: c.api_key ? "api_key" : "entra",
        ...(c.entra ? { tenant_id: c.entra.tenant_id, client_id: c.entra.client_id, authority_host: c.entra.authority_host } : {}),
      };
    case "bedrock":
      return { region: c.region, ...(c.role_arn ? { role_arn: c.role_arn } : {}) };
    case "vertex":
      return { project: c.project, region: c.region, client_email: c.service_account.client_email };
  }
}
