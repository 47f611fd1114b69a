import { createHash } from "node:crypto";
import { EncryptJWT, jwtDecrypt } from "jose";
import type { OAuthAttempt, OAuthProviderSlug } from "./oauth-providers";

export const OAUTH_COOKIE = "rt_oauth";
/** A sign-in must come back from the provider within ten minutes. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;

export interface OAuthState extends OAuthAttempt {
  provider: OAuthProviderSlug;
  /** When the sign-in started (the injected clock), ms. */
  startedAtMs: number;
}

// A key of its own for this cookie, derived from the internal secret (which also signs identities).
const keyOf = (secret: string): Uint8Array => createHash("sha256").update(`router:rt_oauth:${secret}`).digest();

/**
 * The `rt_oauth` cookie's value: the sign-in's state, nonce and PKCE verifier, encrypted and
 * authenticated (JWE, dir + A256GCM), so the browser holds it without being able to read or change it.
 */
export function sealOAuthState(state: OAuthState, secret: string): Promise<string> {
  return new EncryptJWT({ ...state }).setProtectedHeader({ alg: "dir", enc: "A256GCM" }).encrypt(keyOf(secret));
}

/** The state back from the cookie, or null when it was tampered with or is not ours. */
export async function openOAuthState(value: string, secret: string): Promise<OAuthState | null> {
  try {
    const { payload } = await jwtDecrypt(value, keyOf(secret));
    const s = payload as Partial<OAuthState>;
    if (typeof s.state !== "string" || typeof s.nonce !== "string" || typeof s.codeVerifier !== "string") return null;
    if (typeof s.provider !== "string" || typeof s.startedAtMs !== "number") return null;
    return s as OAuthState;
  } catch {
    return null;
  }
}
