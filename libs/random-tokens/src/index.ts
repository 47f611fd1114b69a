import { randomBytes, randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * `bytes` bytes of CSPRNG output, cut from a pool refilled 4 KiB at a time (as Node's randomUUID
 * does): one system call per few hundred ids on the request path instead of one per id. Each byte
 * is handed out once.
 */
export function randomId(bytes: number, encoding: "hex" | "base64url"): string {
  if (used + bytes > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(Math.max(POOL_BYTES, bytes)));
    used = 0;
  }
  const id = pool.toString(encoding, used, used + bytes);
  used += bytes;
  return id;
}

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

/** A resource id with its type prefix (`org_`, `ws_`, `pk_`, `usr_`, `inv_`), 128 random bits. */
export function newId(prefix: "org_" | "ws_" | "pk_" | "usr_" | "inv_"): string {
  return `${prefix}${randomBase62(16)}`;
}
