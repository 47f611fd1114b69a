import { SecretSealer, type SealingPurpose } from "./sealer";

/**
 * Provider credentials (BYOK): the console seals them as it stores them, the gateway opens them to
 * dispatch, so both derive the same key-encryption key. The labels are unchanged since the first
 * release (the gateway's own then), so every stored row still opens.
 */
export const PROVIDER_CREDENTIALS: SealingPurpose = { salt: "router-gateway", info: "provider-credentials/kek/v1" };

/** Seals and opens provider keys and cloud credential documents under ROUTER_MASTER_KEY. */
export class ProviderCredentialSealer extends SecretSealer {
  constructor(masterSecret: string) {
    super(masterSecret, PROVIDER_CREDENTIALS);
  }
}

/** The sealing context binds a sealed credential to its organisation and id: a row moved to another opens nowhere. */
export function providerCredentialContext(orgId: string, credentialId: string): string {
  return `${orgId}/${credentialId}`;
}
