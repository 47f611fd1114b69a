import { createHash } from "node:crypto";
import { ClientSecretCredential } from "@azure/identity";
import { LRUCache } from "lru-cache";
import type { AzureCredential } from "../cloud-credentials";
import { UpstreamAuthError } from "../types";

/** The scope Azure OpenAI accepts tokens for. */
const COGNITIVE_SERVICES = "https://cognitiveservices.azure.com/.default";

type Entra = NonNullable<AzureCredential["entra"]>;

/**
 * Entra ID tokens for Azure OpenAI, one client per service principal. The client (MSAL underneath)
 * keeps its token until shortly before it expires, so a request pays for a token only when one is
 * due; keeping the clients is what makes that cache live across requests.
 */
export class EntraTokens {
  private readonly clients = new LRUCache<string, ClientSecretCredential>({ max: 1000 });

  async token(entra: Entra, signal: AbortSignal): Promise<string> {
    const key = createHash("sha256").update(`${entra.tenant_id}\0${entra.client_id}\0${entra.client_secret}\0${entra.authority_host ?? ""}`).digest("base64url");
    let client = this.clients.get(key);
    if (!client) {
      client = new ClientSecretCredential(entra.tenant_id, entra.client_id, entra.client_secret, {
        // A sovereign cloud's host is named by the operator: nothing to discover from the public cloud.
        ...(entra.authority_host ? { authorityHost: entra.authority_host, disableInstanceDiscovery: true } : {}),
      });
      this.clients.set(key, client);
    }
    try {
      const token = await client.getToken(COGNITIVE_SERVICES, { abortSignal: signal });
      return token.token;
    } catch (err) {
      // The library's message can quote the tenant's answer; only the kind of failure is kept.
      throw new UpstreamAuthError("entra_token_refused", { cause: err instanceof Error ? err.name : undefined });
    }
  }
}
