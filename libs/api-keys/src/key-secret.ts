/** The form of API keys: their class prefixes, minting, and the peppered hash that is their stored identity. */
import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { randomBase62 } from "@router/random-tokens";

export type KeyClass = "inference" | "management";

export const KEY_PREFIXES: Record<KeyClass, string> = { inference: "rt-v1-", management: "rt-mgmt-" };

const SECRET_BYTES = 32;
// 32 bytes in base62 always take 43 characters (randomBase62 pads).
const SECRET_PATTERN = /^[0-9A-Za-z]{43}$/;

export interface MintedKey {
  /** Returned to the caller once and never stored. */
  plaintext: string;
  hash: string;
  /** Safe to show: the class prefix and the first four characters of the secret. */
  prefix: string;
  /** Safe to show: prefix and last four characters, so a person can tell two keys apart. */
  label: string;
  class: KeyClass;
}

/** The stored identity of a key: hex HMAC-SHA256 of the plaintext under the pepper. */
export function hashKey(plaintext: string, pepper: string): string {
  return createHmac("sha256", pepperKey(pepper)).update(plaintext).digest("hex");
}

let lastPepper: { pepper: string; key: KeyObject } | undefined;

/**
 * The pepper as a key object, made once per pepper (a process has one): given as a string,
 * createHmac imports it again at every call, about half the cost of hashing a key.
 */
function pepperKey(pepper: string): KeyObject {
  if (lastPepper?.pepper !== pepper) lastPepper = { pepper, key: createSecretKey(pepper, "utf8") };
  return lastPepper.key;
}

export function mintKey(cls: KeyClass, pepper: string): MintedKey {
  const secret = randomBase62(SECRET_BYTES);
  const plaintext = `${KEY_PREFIXES[cls]}${secret}`;
  const prefix = `${KEY_PREFIXES[cls]}${secret.slice(0, 4)}`;
  return { plaintext, hash: hashKey(plaintext, pepper), prefix, label: `${prefix}...${secret.slice(-4)}`, class: cls };
}

/** The class a bearer token claims by its form, or null when it is not a key this gateway mints. */
export function keyClassOf(token: string): KeyClass | null {
  for (const cls of ["inference", "management"] as const) {
    const prefix = KEY_PREFIXES[cls];
    if (token.startsWith(prefix) && SECRET_PATTERN.test(token.slice(prefix.length))) return cls;
  }
  return null;
}

/**
 * The class a token's prefix claims, whatever follows it: a key cut short or mistyped still names
 * what the person meant, so the refusal can say "unknown" rather than "not a key".
 */
export function claimedKeyClass(token: string): KeyClass | null {
  for (const cls of ["inference", "management"] as const) if (token.startsWith(KEY_PREFIXES[cls])) return cls;
  return null;
}

const HASH_PATTERN = /^[0-9a-f]{64}$/;

export function isKeyHash(value: string): boolean {
  return HASH_PATTERN.test(value);
}
