import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** A secret sealed under its own data key, with that data key wrapped under the master key. */
export interface SealedSecret {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  wrappedKey: Buffer;
  wrappedKeyIv: Buffer;
  wrappedKeyTag: Buffer;
  kekVersion: number;
}

/**
 * What the key-encryption key is for: HKDF-SHA256 salt and info. Each kind of secret gets its own
 * labels, so a key-encryption key derived for one never opens another's rows. Never change the
 * labels of a kind once rows are sealed under them.
 */
export interface SealingPurpose {
  salt: string;
  info: string;
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
 * Envelope encryption for secrets kept at rest (provider keys, signing secrets, header values):
 * each secret gets a fresh 256-bit data key (AES-256-GCM), and the data key is wrapped
 * (AES-256-GCM) under a key-encryption key derived with HKDF-SHA256 from ROUTER_MASTER_KEY and the
 * purpose's labels. Both layers authenticate `context` (e.g. the row and organisation ids), so a
 * sealed row copied onto another row or organisation does not open.
 */
export class SecretSealer {
  private readonly kek: Buffer;

  constructor(masterSecret: string, purpose: SealingPurpose) {
    if (!masterSecret) throw new Error("ROUTER_MASTER_KEY is empty");
    this.kek = Buffer.from(
      hkdfSync("sha256", Buffer.from(masterSecret, "utf8"), Buffer.from(purpose.salt), Buffer.from(purpose.info), 32),
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

  /** Opens a sealed secret; throws when the row was tampered with or sealed under another master key or purpose. */
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

const PACKED_PARTS = ["ciphertext", "iv", "tag", "wrappedKey", "wrappedKeyIv", "wrappedKeyTag"] as const;

/**
 * A sealed secret as one text value (`v<kek version>.` and six base64url parts), for stores that
 * keep it in a single column.
 */
export function packSealed(sealed: SealedSecret): string {
  return [`v${sealed.kekVersion}`, ...PACKED_PARTS.map((p) => sealed[p].toString("base64url"))].join(".");
}

/** Reads what `packSealed` wrote; throws on anything else. */
export function unpackSealed(text: string): SealedSecret {
  const [version, ...parts] = text.split(".");
  if (!version || !/^v\d+$/.test(version) || parts.length !== PACKED_PARTS.length) throw new Error("not a packed sealed secret");
  const buffers = parts.map((p) => Buffer.from(p, "base64url"));
  const [ciphertext, iv, tag, wrappedKey, wrappedKeyIv, wrappedKeyTag] = buffers as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
  return { ciphertext, iv, tag, wrappedKey, wrappedKeyIv, wrappedKeyTag, kekVersion: Number(version.slice(1)) };
}
