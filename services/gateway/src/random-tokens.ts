import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * `bytes` bytes of CSPRNG output as base62, left-padded to the length that any value of that many
 * bytes needs, so every token of one size has the same length and keeps all of its entropy.
 * Base62 rather than base64url: a key double-clicks and pastes as one word.
 */
export function randomBase62(bytes: number): string {
  const width = Math.ceil((bytes * 8) / Math.log2(62));
  let n = BigInt(`0x${randomBytes(bytes).toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, "0");
}

/** A resource id with its type prefix (`org_`, `ws_`, `pk_`), 128 random bits. */
export function newId(prefix: "org_" | "ws_" | "pk_"): string {
  return `${prefix}${randomBase62(16)}`;
}
