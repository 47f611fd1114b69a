import { randomBytes } from "node:crypto";
import { ConfigError } from "./config-error";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SECRET_NAMES = ["ROUTER_KEY_PEPPER", "ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY"] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Record<SecretName, string>;

/**
 * The three process secrets. Taken from the environment when set (production must set them);
 * otherwise, for the embedded default, generated once and kept in `<dataDir>/secrets.json` (mode
 * 0600) so the CLI and the server agree. Returns which ones were generated.
 */
export function resolveSecrets(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  opts: { allowGenerated: boolean },
): { secrets: Secrets; generated: SecretName[] } {
  const file = join(dataDir, "secrets.json");
  let stored: Partial<Secrets> = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, "utf8")) as Partial<Secrets>;
  const out: Partial<Secrets> = {};
  const generated: SecretName[] = [];
  for (const name of SECRET_NAMES) {
    const fromEnv = env[name];
    if (fromEnv) out[name] = fromEnv;
    else if (stored[name]) out[name] = stored[name];
    else if (opts.allowGenerated) {
      out[name] = randomBytes(32).toString("base64url");
      stored[name] = out[name];
      generated.push(name);
    } else throw new Error(`${name} must be set`);
  }
  if (generated.length > 0) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return { secrets: out as Secrets, generated };
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
    throw new ConfigError(missing.map((name) => `${name}: required with DATABASE_URL (set the same value on every service)`));
  }
  const { secrets } = resolveSecrets(env, opts.dataDir, { allowGenerated: true });
  return Object.fromEntries(names.map((name) => [name, secrets[name]])) as Pick<Secrets, N>;
}
