import { generateIdentityKeyPair } from "@router/config";
import { identityPublicKeys, identitySigningKey, type IdentityPublicKeys, type IdentitySigningKey } from "@router/http-kit";

/** A fresh edge key pair for a test: sign as the gateway does, verify as the services do. */
export interface TestIdentityKeys {
  signingKey: IdentitySigningKey;
  publicKeys: IdentityPublicKeys;
  /** The same pair as the services read it from the environment. */
  env: { ROUTER_IDENTITY_SIGNING_KEY: string; ROUTER_IDENTITY_PUBLIC_KEYS: string };
}

export function newIdentityKeys(): TestIdentityKeys {
  const pair = generateIdentityKeyPair();
  return {
    signingKey: identitySigningKey(pair.signingKey),
    publicKeys: identityPublicKeys(pair.publicKeys),
    env: { ROUTER_IDENTITY_SIGNING_KEY: JSON.stringify(pair.signingKey), ROUTER_IDENTITY_PUBLIC_KEYS: JSON.stringify(pair.publicKeys) },
  };
}
