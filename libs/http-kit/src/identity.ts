import { errors, jwtVerify, SignJWT } from "jose";
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
}

export const IDENTITY_HEADER = "x-router-identity";

// A JWT (HS256 under ROUTER_INTERNAL_SECRET) issued by the gateway for the internal services only.
const ALGORITHM = "HS256";
const ISSUER = "router-gateway";
const AUDIENCE = "router-internal";
/**
 * Accepted from 5 s before its signing time (replicas' clocks differ, and JWT times are whole
 * seconds) until 60 s after it.
 */
const SKEW_S = 5;
const MAX_AGE_S = 60;

const keyOf = (secret: string): Uint8Array => new TextEncoder().encode(secret);

/** Signs an identity as a JWT stamped with the signing time (`iat`, whole seconds). */
export function signIdentity(identity: Identity, secret: string, nowMs = Date.now()): Promise<string> {
  return new SignJWT({ identity })
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(nowMs / 1000))
    .sign(keyOf(secret));
}

/** Verifies a signed identity header; rejects with 401 when it is missing, forged or stale. */
export async function verifyIdentity(header: string | undefined, secret: string, nowMs = Date.now()): Promise<Identity> {
  if (!header) throw new DomainError("unauthorized", "missing identity context");
  try {
    const { payload } = await jwtVerify<{ identity: Identity }>(header, keyOf(secret), {
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
