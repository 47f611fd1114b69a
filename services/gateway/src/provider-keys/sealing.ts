import { SecretSealer as Sealer, type SealingPurpose } from "@router/sealing";

export type { SealedSecret } from "@router/sealing";

/** The provider credentials' key-encryption labels, unchanged since the first release so stored rows open. */
export const PROVIDER_CREDENTIALS: SealingPurpose = { salt: "router-gateway", info: "provider-credentials/kek/v1" };

/** Seals provider keys (BYOK) under ROUTER_MASTER_KEY. */
export class SecretSealer extends Sealer {
  constructor(masterSecret: string) {
    super(masterSecret, PROVIDER_CREDENTIALS);
  }
}
