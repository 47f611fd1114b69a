import { randomBytes } from "node:crypto";
import { ConfigError } from "./config-error";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateIdentityKeyPair } from "./identity-keys";

export const SECRET_NAMES = [
  "ROUTER_KEY_PEPPER",
  // The gateway's own: it keys the CSRF tokens and the OAuth state cookie; no other service reads it.
  "ROUTER_INTERNAL_SECRET",
  "ROUTER_MASTER_KEY",
  // The edge's private Ed25519 JWK: only the gateway signs identities.
  "ROUTER_IDENTITY_SIGNING_KEY",
  // Its public JWKS: what the internal services verify identities with. Not secret, kept beside the rest.
  "ROUTER_IDENTITY_PUBLIC_KEYS",
] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Record<SecretName, string>;

/** What a missing one is, in the line that stops a start with a database. */
const REQUIRED_HINT: Record<SecretName, string> = {
  ROUTER_KEY_PEPPER: "set the same value on the gateway and the CLI",
  ROUTER_INTERNAL_SECRET: "the sessions' CSRF key, shared by the gateway and the console",
  ROUTER_MASTER_KEY: "set the same value on every service that seals secrets",
  ROUTER_IDENTITY_SIGNING_KEY: "the edge's private Ed25519 JWK; `router keys identity` makes one",
  ROUTER_IDENTITY_PUBLIC_KEYS: "a JWKS of the edge's public Ed25519 keys; `router keys identity` makes one",
};

/** A generated value: symmetric secrets are 32 random bytes; the identity pair is made once, both halves together. */
function generate(name: SecretName, stored: Partial<Secrets>): string {
  if (name !== "ROUTER_IDENTITY_SIGNING_KEY" && name !== "ROUTER_IDENTITY_PUBLIC_KEYS") return randomBytes(32).toString("base64url");
  if (!stored.ROUTER_IDENTITY_SIGNING_KEY || !stored.ROUTER_IDENTITY_PUBLIC_KEYS) {
    const pair = generateIdentityKeyPair();
    stored.ROUTER_IDENTITY_SIGNING_KEY = JSON.stringify(pair.signingKey);
    stored.ROUTER_IDENTITY_PUBLIC_KEYS = JSON.stringify(pair.publicKeys);
  }
  return stored[name] as string;
}

/**
 * The process secrets (`names`, every one by default). Taken from the environment when set
 * (production must set them); otherwise, for the embedded default, generated once and kept in
 * `<dataDir>/secrets.json` (mode 0600) so the CLI and the server agree. Returns which ones were
 * generated.
 */
export function resolveSecrets<N extends SecretName = SecretName>(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  opts: { allowGenerated: boolean; names?: readonly N[] },
): { secrets: Pick<Secrets, N>; generated: N[] } {
  const names = opts.names ?? (SECRET_NAMES as readonly SecretName[] as readonly N[]);
  const file = join(dataDir, "secrets.json");
  let stored: Partial<Secrets> = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, "utf8")) as Partial<Secrets>;
  const out: Partial<Secrets> = {};
  const generated: N[] = [];
  // What was kept before this call: a pair half generated just now still counts as generated.
  const kept: Partial<Secrets> = { ...stored };
  for (const name of names) {
    const fromEnv = env[name];
    if (fromEnv) out[name] = fromEnv;
    else if (kept[name]) out[name] = kept[name];
    else if (opts.allowGenerated) {
      out[name] = generate(name, stored);
      stored[name] = out[name];
      generated.push(name);
    } else throw new Error(`${name} must be set`);
  }
  if (generated.length > 0) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return { secrets: out as Pick<Secrets, N>, generated };
}

/**
 * The secrets one service needs, by name: each from the environment when set; otherwise, only for
 * the embedded default (no `DATABASE_URL`), the ones kept or generated under `dataDir`, which the
 * one-process runner and the CLI share. With a database, a missing one stops the start, named.
 */
export function serviceSecrets<N extends SecretName>(
  env: NodeJS.ProcessEnv,
  names: readonly N[],
  opts: { dataDir: string; embedded: boolean },
): Pick<Secrets, N> {
  const missing = names.filter((name) => !env[name]);
  if (missing.length === 0) return Object.fromEntries(names.map((name) => [name, env[name]])) as Pick<Secrets, N>;
  if (!opts.embedded) {
    throw new ConfigError(missing.map((name) => `${name}: required with DATABASE_URL (${REQUIRED_HINT[name]})`));
  }
  return resolveSecrets(env, opts.dataDir, { allowGenerated: true, names }).secrets;
}
