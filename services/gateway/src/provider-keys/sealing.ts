import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** A provider key sealed under its own data key, with that data key wrapped under the master key. */
export interface SealedSecret {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  wrappedKey: Buffer;
  wrappedKeyIv: Buffer;
  wrappedKeyTag: Buffer;
  kekVersion: number;
}

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const KEK_VERSION = 1;

interface Box {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
}

function encrypt(key: Buffer, plaintext: Buffer, aad: Buffer): Box {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { ciphertext, iv, tag: cipher.getAuthTag() };
}

function decrypt(key: Buffer, box: Box, aad: Buffer): Buffer {
  const decipher = createDecipheriv(ALGORITHM, key, box.iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(box.tag);
  return Buffer.concat([decipher.update(box.ciphertext), decipher.final()]);
}

/**
 * Envelope encryption for provider keys: each secret gets a fresh 256-bit data key (AES-256-GCM),
 * and the data key is wrapped (AES-256-GCM) under a key-encryption key derived with HKDF-SHA256
 * from ROUTER_MASTER_KEY. Both layers authenticate `context` (the credential and organisation
 * ids), so a sealed row copied onto another credential or organisation does not open.
 */
export class SecretSealer {
  private readonly kek: Buffer;

  constructor(masterSecret: string) {
    if (!masterSecret) throw new Error("ROUTER_MASTER_KEY is empty");
    this.kek = Buffer.from(
      hkdfSync("sha256", Buffer.from(masterSecret, "utf8"), Buffer.from("router-gateway"), Buffer.from("provider-credentials/kek/v1"), 32),
    );
  }

  seal(secret: string, context: string): SealedSecret {
    const aad = Buffer.from(context, "utf8");
    const dataKey = randomBytes(32);
    try {
      const sealed = encrypt(dataKey, Buffer.from(secret, "utf8"), aad);
      const wrapped = encrypt(this.kek, dataKey, aad);
      return {
        ...sealed,
        wrappedKey: wrapped.ciphertext,
        wrappedKeyIv: wrapped.iv,
        wrappedKeyTag: wrapped.tag,
        kekVersion: KEK_VERSION,
      };
    } finally {
      dataKey.fill(0);
    }
  }

  /** Opens a sealed secret; throws when the row was tampered with or sealed under another master key. */
  open(sealed: SealedSecret, context: string): string {
    if (sealed.kekVersion !== KEK_VERSION) throw new Error(`unknown key-encryption key version ${sealed.kekVersion}`);
    const aad = Buffer.from(context, "utf8");
    const dataKey = decrypt(this.kek, { ciphertext: sealed.wrappedKey, iv: sealed.wrappedKeyIv, tag: sealed.wrappedKeyTag }, aad);
    try {
      return decrypt(dataKey, sealed, aad).toString("utf8");
    } finally {
      dataKey.fill(0);
    }
  }
}
