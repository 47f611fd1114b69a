import { readFileSync } from "node:fs";
import { generateIdentityKeyPair, parseIdentityPublicKeys } from "@router/config";

/**
 * Prints a new Ed25519 key pair for the identity the gateway signs, as one JSON object on stdout:
 * `kid`, `signing_key` (the private JWK: ROUTER_IDENTITY_SIGNING_KEY, the gateway's alone) and
 * `public_keys` (a JWKS: ROUTER_IDENTITY_PUBLIC_KEYS, for every other service). With
 * `--public-keys <file>` the new public key is added to that set, the first step of a rotation.
 */
export function runKeysIdentity(opts: { publicKeysFile?: string }): number {
  let current: { keys: unknown[] } = { keys: [] };
  if (opts.publicKeysFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.publicKeysFile, "utf8");
    } catch {
      process.stderr.write(`--public-keys: cannot read ${opts.publicKeysFile}\n`);
      return 2;
    }
    current = parseIdentityPublicKeys(text, "--public-keys");
  }
  const pair = generateIdentityKeyPair();
  const out = {
    kid: pair.signingKey.kid,
    signing_key: pair.signingKey,
    public_keys: { keys: [...current.keys, ...pair.publicKeys.keys] },
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  return 0;
}
