import { createHash, generateKeyPairSync } from "node:crypto";
import { z } from "zod";
import { ConfigError } from "./config-error";

/**
 * The edge's Ed25519 keys for the identity it forwards to the internal services: the gateway signs
 * with its private JWK (`ROUTER_IDENTITY_SIGNING_KEY`), every other service verifies with the public
 * JWK set (`ROUTER_IDENTITY_PUBLIC_KEYS`), so a service can check an identity but never make one.
 */
export interface IdentityPublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
}
export interface IdentityPrivateJwk extends IdentityPublicJwk {
  d: string;
}
export interface IdentityPublicJwks {
  keys: IdentityPublicJwk[];
}

const base64url = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a 32-byte base64url value");
const okpFields = {
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: base64url,
  kid: z.string().min(1).optional(),
};
const privateJwkSchema = z.looseObject({ ...okpFields, d: base64url });
const publicJwksSchema = z.object({ keys: z.array(z.looseObject(okpFields)).min(1) });

/** RFC 7638 thumbprint: the `kid` of a key that names none (and of every generated one). */
export function identityKeyThumbprint(x: string): string {
  return createHash("sha256").update(JSON.stringify({ crv: "Ed25519", kty: "OKP", x })).digest("base64url");
}

function parseJson(name: string, value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new ConfigError([`${name}: not JSON`]);
  }
}

function issuesOf(name: string, error: z.ZodError): ConfigError {
  return new ConfigError(error.issues.map((i) => `${[name, ...i.path].join(".")}: ${i.message}`));
}

/** Reads `ROUTER_IDENTITY_SIGNING_KEY`: one private Ed25519 JWK (JSON); `kid` defaults to its thumbprint. */
export function parseIdentitySigningKey(value: string, name = "ROUTER_IDENTITY_SIGNING_KEY"): IdentityPrivateJwk {
  const parsed = privateJwkSchema.safeParse(parseJson(name, value));
  if (!parsed.success) throw issuesOf(name, parsed.error);
  const { x, d, kid } = parsed.data;
  return { kty: "OKP", crv: "Ed25519", x, d, kid: kid ?? identityKeyThumbprint(x) };
}

/**
 * Reads `ROUTER_IDENTITY_PUBLIC_KEYS`: a JWKS (`{"keys":[...]}`) of the edge's public Ed25519 keys,
 * each `kid` defaulting to its thumbprint. A key with a private part (`d`) is refused: the set is
 * handed to every service, and whoever holds `d` can sign as any caller.
 */
export function parseIdentityPublicKeys(value: string, name = "ROUTER_IDENTITY_PUBLIC_KEYS"): IdentityPublicJwks {
  const json = parseJson(name, value);
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (Array.isArray(keys) && keys.some((k) => typeof k === "object" && k !== null && "d" in k)) {
    throw new ConfigError([`${name}: holds a private key (a "d" member); give the public keys only`]);
  }
  const parsed = publicJwksSchema.safeParse(json);
  if (!parsed.success) throw issuesOf(name, parsed.error);
  const out = parsed.data.keys.map(({ x, kid }): IdentityPublicJwk => ({ kty: "OKP", crv: "Ed25519", x, kid: kid ?? identityKeyThumbprint(x) }));
  const kids = out.map((k) => k.kid);
  const repeated = kids.find((kid, i) => kids.indexOf(kid) !== i);
  if (repeated) throw new ConfigError([`${name}: kid "${repeated}" names two keys`]);
  return { keys: out };
}

/** A new Ed25519 pair, `kid` its thumbprint: the private JWK and the JWKS holding its public half. */
export function generateIdentityKeyPair(): { signingKey: IdentityPrivateJwk; publicKeys: IdentityPublicJwks } {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  if (!jwk.x || !jwk.d) throw new Error("ed25519 key exported without x or d");
  const kid = identityKeyThumbprint(jwk.x);
  return {
    signingKey: { kty: "OKP", crv: "Ed25519", x: jwk.x, d: jwk.d, kid },
    publicKeys: { keys: [{ kty: "OKP", crv: "Ed25519", x: jwk.x, kid }] },
  };
}
