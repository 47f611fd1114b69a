import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The header every signed webhook delivery carries: `t=<unix seconds>,v1=<hex>`. */
export const SIGNATURE_HEADER = "x-router-signature";

/** How far a signature's `t` may be from the verifier's clock by default (replay window). */
export const DEFAULT_SIGNATURE_TOLERANCE_S = 300;

/** A fresh signing secret: `whsec_` and 256 bits of CSPRNG output, base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/**
 * The `x-router-signature` value for `body` sent at `unixSeconds`: `v1` is HMAC-SHA256, keyed with
 * the secret's text, over `<t>.<raw body>`.
 */
export function signatureHeaderValue(secret: string, body: string | Buffer, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

/**
 * Whether `header` is a valid signature of `body` under `secret`, made within `toleranceS` of
 * `nowS`. Several `v1` values (during a secret rotation) pass when any one matches.
 */
export function verifySignature(
  header: string | undefined,
  body: string | Buffer,
  secret: string,
  opts: { nowS: number; toleranceS?: number },
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === "t" && value !== undefined && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (name === "v1" && value !== undefined && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return false;
  if (Math.abs(opts.nowS - timestamp) > (opts.toleranceS ?? DEFAULT_SIGNATURE_TOLERANCE_S)) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, body), "hex");
  return candidates.some((c) => timingSafeEqual(Buffer.from(c, "hex"), expected));
}
