import { SecretSealer, type SealedSecret } from "@router/sealing";

/** The key-encryption labels of broadcast destination secrets; never change them once rows exist. */
const DESTINATION_SECRETS = { salt: "router-broadcast", info: "destination-secrets/kek/v1" };

/** Which secret of a destination a sealed value is: each is bound to its own row and purpose. */
export type SecretSlot = "header_value" | "signing_secret";

/** A sealed secret as stored in a jsonb column: every buffer as base64. */
export interface StoredSeal {
  v: number;
  ciphertext: string;
  iv: string;
  tag: string;
  wrapped_key: string;
  wrapped_key_iv: string;
  wrapped_key_tag: string;
}

const b64 = (b: Buffer): string => b.toString("base64");
const buf = (s: string): Buffer => Buffer.from(s, "base64");

/**
 * Seals and opens a destination's signing secret and header value under ROUTER_MASTER_KEY. The
 * context binds each value to its organisation, destination and slot, so a value copied to another
 * row (or from the header slot to the signing slot) does not open.
 */
export class DestinationSecrets {
  private readonly sealer: SecretSealer;

  constructor(masterKey: string) {
    this.sealer = new SecretSealer(masterKey, DESTINATION_SECRETS);
  }

  seal(secret: string, where: { orgId: string; destinationId: string; slot: SecretSlot }): StoredSeal {
    const s = this.sealer.seal(secret, contextOf(where));
    return {
      v: s.kekVersion,
      ciphertext: b64(s.ciphertext),
      iv: b64(s.iv),
      tag: b64(s.tag),
      wrapped_key: b64(s.wrappedKey),
      wrapped_key_iv: b64(s.wrappedKeyIv),
      wrapped_key_tag: b64(s.wrappedKeyTag),
    };
  }

  /** Throws when the value was altered, moved or sealed under another master key. */
  open(stored: StoredSeal, where: { orgId: string; destinationId: string; slot: SecretSlot }): string {
    const sealed: SealedSecret = {
      kekVersion: stored.v,
      ciphertext: buf(stored.ciphertext),
      iv: buf(stored.iv),
      tag: buf(stored.tag),
      wrappedKey: buf(stored.wrapped_key),
      wrappedKeyIv: buf(stored.wrapped_key_iv),
      wrappedKeyTag: buf(stored.wrapped_key_tag),
    };
    return this.sealer.open(sealed, contextOf(where));
  }
}

function contextOf(where: { orgId: string; destinationId: string; slot: SecretSlot }): string {
  return `${where.orgId}/${where.destinationId}/${where.slot}`;
}

/** What is shown again of a header value: its last four characters, nothing for one shorter than eight. */
export function headerHint(value: string): string {
  return value.length >= 8 ? value.slice(-4) : "";
}
