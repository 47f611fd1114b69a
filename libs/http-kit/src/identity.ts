import { createPrivateKey, type JsonWebKey, type KeyObject } from "node:crypto";
import { createLocalJWKSet, errors, jwtVerify, SignJWT, type FlattenedJWSInput, type JSONWebKeySet, type JWK, type JWSHeaderParameters, type KeyLike } from "jose";
import type { Role } from "@router/access";
import { DomainError } from "@router/errors";

/** Who is calling, as the gateway authenticated it. Forwarded to owning services, signed. */
export interface Identity {
  orgId: string;
  /** "inference" or "management" key, or a dashboard "session". */
  credential: "inference" | "management" | "session";
  keyHash: string | null;
  keyName: string | null;
  workspaceId: string | null;
  /** The role the caller acts with; a management key with no person behind it is `owner`. */
  role: Role;
  userId: string | null;
  operator: boolean;
  /**
   * The workspace the route names (a `workspace` filter, a report's workspace), when it names one:
   * the gateway has checked it belongs to `orgId` (another organisation's is a 404 there) and adds
   * its current name, which only the gateway holds.
   */
  workspace?: { id: string; name: string };
  /**
   * The organisation's current name, on routes that show it (report branding falls back to it);
   * only the gateway holds it.
   */
  orgName?: string;
  /**
   * The dashboard session of a `session` caller: its token's hash, how it signed in and when it
   * expires (ISO 8601), for the routes that show or end the current session.
   */
  session?: { tokenHash: string; authMethod: string; expiresAt: string };
}

export const IDENTITY_HEADER = "x-router-identity";

/**
 * A JWT signed by the edge (the gateway) with its Ed25519 key, `kid` in the header, for the
 * internal services only. They verify it with the edge's public keys, so holding what a service
 * holds is not enough to sign as a caller.
 */
const ALGORITHM = "EdDSA";
const ISSUER = "router-gateway";
const AUDIENCE = "router-internal";
/**
 * Accepted from 5 s before its signing time (replicas' clocks differ, and JWT times are whole
 * seconds) until 60 s after it.
 */
const SKEW_S = 5;
const MAX_AGE_S = 60;

/** The edge's private key that signs identities, and the `kid` its tokens name. */
export interface IdentitySigningKey {
  readonly kid: string;
  readonly key: KeyObject;
}

/** The public keys identities are verified with, by `kid`: every key of the set is accepted (rotation). */
export interface IdentityPublicKeys {
  readonly kids: readonly string[];
  readonly resolve: (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<KeyLike>;
}

/** From the edge's private Ed25519 JWK, which must name its `kid`. */
export function identitySigningKey(jwk: JWK): IdentitySigningKey {
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d) throw new Error("identity signing key: a private Ed25519 JWK is required");
  if (!jwk.kid) throw new Error("identity signing key: the JWK names no kid");
  return { kid: jwk.kid, key: createPrivateKey({ key: jwk as JsonWebKey, format: "jwk" }) };
}

/** From a JWKS of the edge's public Ed25519 keys; a member with a private part is refused. */
export function identityPublicKeys(jwks: JSONWebKeySet): IdentityPublicKeys {
  if (jwks.keys.some((k) => k.d !== undefined)) throw new Error("identity public keys: the set holds a private key");
  if (jwks.keys.some((k) => !k.kid)) throw new Error("identity public keys: every key must name its kid");
  const set = createLocalJWKSet(jwks);
  return {
    kids: jwks.keys.map((k) => k.kid as string),
    // A token must name its key: without a kid the set would try each key in turn.
    resolve: (header, token) => {
      if (typeof header.kid !== "string") throw new errors.JWSInvalid("identity context names no kid");
      return set(header, token);
    },
  };
}

/** Signs an identity as a JWT stamped with the signing time (`iat`, whole seconds). */
export function signIdentity(identity: Identity, signingKey: IdentitySigningKey, nowMs = Date.now()): Promise<string> {
  return new SignJWT({ identity })
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT", kid: signingKey.kid })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(nowMs / 1000))
    .sign(signingKey.key);
}

/** Verifies a signed identity header; rejects with 401 when it is missing, forged or stale. */
export async function verifyIdentity(header: string | undefined, publicKeys: IdentityPublicKeys, nowMs = Date.now()): Promise<Identity> {
  if (!header) throw new DomainError("unauthorized", "missing identity context");
  try {
    const { payload } = await jwtVerify<{ identity: Identity }>(header, publicKeys.resolve, {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      requiredClaims: ["iat"],
      currentDate: new Date(nowMs),
      clockTolerance: SKEW_S,
      maxTokenAge: MAX_AGE_S - SKEW_S,
    });
    if (!payload.identity || typeof payload.identity !== "object") throw new errors.JWTInvalid("no identity claim");
    return payload.identity;
  } catch (err) {
    const timing = err instanceof errors.JWTExpired || err instanceof errors.JWTClaimValidationFailed;
    if (timing && err.claim === "iat") {
      throw new DomainError("unauthorized", "stale identity context");
    }
    throw new DomainError("unauthorized", "invalid identity context", { cause: err });
  }
}
