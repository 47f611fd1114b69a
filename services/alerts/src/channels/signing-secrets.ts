import { newSigningSecret } from "@router/outbound";
import { packSealed, SecretSealer, unpackSealed, type SealingPurpose } from "@router/sealing";

/** The key-encryption labels of webhook signing secrets: fixed once rows are sealed under them. */
const SIGNING_SECRETS: SealingPurpose = { salt: "router-alerts", info: "alert-channel-signing-secrets/kek/v1" };

/**
 * Webhook signing secrets: minted at creation (returned once), kept sealed under ROUTER_MASTER_KEY
 * (they must be usable for signing, so they are sealed rather than hashed), opened per delivery.
 */
export class SigningSecrets {
  private readonly sealer: SecretSealer;

  constructor(masterKey: string) {
    this.sealer = new SecretSealer(masterKey, SIGNING_SECRETS);
  }

  /** A fresh secret and its sealed form for the channel `channelId` of `orgId`. */
  mint(orgId: string, channelId: string): { secret: string; sealed: string } {
    const secret = newSigningSecret();
    return { secret, sealed: packSealed(this.sealer.seal(secret, contextOf(orgId, channelId))) };
  }

  open(orgId: string, channelId: string, sealed: string): string {
    return this.sealer.open(unpackSealed(sealed), contextOf(orgId, channelId));
  }
}

function contextOf(orgId: string, channelId: string): string {
  return `${orgId}/${channelId}`;
}
