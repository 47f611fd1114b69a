import { env, z } from "@router/config";
import { DEFAULT_PKCE_KEY_DAYS, DEFAULT_PKCE_KEY_LIMIT_USD } from "./pkce/pkce-routes";
import type { OAuthProviders } from "./sign-in/oauth-providers";

export const DEFAULT_GATEWAY_URL = "http://127.0.0.1:8080";

/**
 * Keys issued to apps through OAuth PKCE: their hard lifetime spend ceiling (USD) and how many days
 * they live from the exchange. Fixed into each code at approval. The one-process runner reads them too.
 */
export const pkceEnvironment = {
  CONSOLE_PKCE_KEY_LIMIT_USD: z.coerce.number().positive().max(1_000_000_000).default(DEFAULT_PKCE_KEY_LIMIT_USD),
  CONSOLE_PKCE_KEY_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULT_PKCE_KEY_DAYS),
};

type PkceEnv = { [K in keyof typeof pkceEnvironment]: z.infer<(typeof pkceEnvironment)[K]> };

/** The `startConsole` options the PKCE settings give. */
export function pkceOptionsOf(config: PkceEnv): { pkceKeyLimitUsd: number; pkceKeyDays: number } {
  return { pkceKeyLimitUsd: config.CONSOLE_PKCE_KEY_LIMIT_USD, pkceKeyDays: config.CONSOLE_PKCE_KEY_DAYS };
}

/**
 * Sign-in: the identity providers offered (each needs its issuer, client id and secret; Google's
 * issuer has a default) and whether wallet sign-in is. The one-process runner reads them too.
 */
export const signInEnvironment = {
  CONSOLE_OAUTH_GOOGLE_ISSUER: z.string().url().default("https://accounts.google.com"),
  CONSOLE_OAUTH_GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  CONSOLE_OAUTH_GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  CONSOLE_OAUTH_OIDC_ISSUER: z.string().url().optional(),
  CONSOLE_OAUTH_OIDC_CLIENT_ID: z.string().min(1).optional(),
  CONSOLE_OAUTH_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  CONSOLE_WALLET_SIGNIN: env.bool(true),
};

type SignInEnv = z.infer<z.ZodObject<typeof signInEnvironment>>;

/** The `startConsole` options the sign-in settings give: a provider counts once all three of its values are set. */
export function signInOptionsOf(config: SignInEnv): { oauthProviders: OAuthProviders; walletSignIn: boolean } {
  const provider = (issuer: string | undefined, clientId: string | undefined, clientSecret: string | undefined) =>
    issuer && clientId && clientSecret ? { issuer, clientId, clientSecret } : undefined;
  const oauthProviders: OAuthProviders = {};
  const google = provider(config.CONSOLE_OAUTH_GOOGLE_ISSUER, config.CONSOLE_OAUTH_GOOGLE_CLIENT_ID, config.CONSOLE_OAUTH_GOOGLE_CLIENT_SECRET);
  const oidc = provider(config.CONSOLE_OAUTH_OIDC_ISSUER, config.CONSOLE_OAUTH_OIDC_CLIENT_ID, config.CONSOLE_OAUTH_OIDC_CLIENT_SECRET);
  if (google) oauthProviders.google = google;
  if (oidc) oauthProviders.oidc = oidc;
  return { oauthProviders, walletSignIn: config.CONSOLE_WALLET_SIGNIN };
}

/**
 * Providers given some of their settings but not all: not offered, and the operator should hear why
 * (a missing secret otherwise looks like sign-in silently not existing).
 */
export function incompleteSignInProviders(config: SignInEnv): Array<{ provider: string; missing: string[] }> {
  const check = (provider: string, values: Record<string, string | undefined>, issuerHasDefault: boolean) => {
    const set = Object.entries(values).filter(([name, value]) => value !== undefined && !(issuerHasDefault && name.endsWith("_ISSUER")));
    const missing = Object.entries(values).filter(([, value]) => value === undefined).map(([name]) => name);
    return set.length > 0 && missing.length > 0 ? [{ provider, missing }] : [];
  };
  return [
    ...check(
      "google",
      {
        CONSOLE_OAUTH_GOOGLE_ISSUER: config.CONSOLE_OAUTH_GOOGLE_ISSUER,
        CONSOLE_OAUTH_GOOGLE_CLIENT_ID: config.CONSOLE_OAUTH_GOOGLE_CLIENT_ID,
        CONSOLE_OAUTH_GOOGLE_CLIENT_SECRET: config.CONSOLE_OAUTH_GOOGLE_CLIENT_SECRET,
      },
      true,
    ),
    ...check(
      "oidc",
      {
        CONSOLE_OAUTH_OIDC_ISSUER: config.CONSOLE_OAUTH_OIDC_ISSUER,
        CONSOLE_OAUTH_OIDC_CLIENT_ID: config.CONSOLE_OAUTH_OIDC_CLIENT_ID,
        CONSOLE_OAUTH_OIDC_CLIENT_SECRET: config.CONSOLE_OAUTH_OIDC_CLIENT_SECRET,
      },
      false,
    ),
  ];
}

/** The console service's settings, read from the environment once in main.ts. */
export const consoleConfigSchema = z.object({
  /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR. */
  DATABASE_URL: z.string().optional(),
  /**
   * false (production): the service only checks that its schema is at the latest migration and
   * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
   */
  ROUTER_MIGRATE_ON_START: env.bool(true),
  /** Embedded state: PGlite files and generated secrets. */
  ROUTER_DATA_DIR: z.string().default(".data"),
  CONSOLE_HTTP_PORT: env.port(8088),
  /** The ConsoleService (gRPC) the gateway asks for provider credentials (`CONSOLE_GRPC_ADDR` on the gateway). */
  CONSOLE_GRPC_PORT: env.port(50053),
  /** Internal port: loopback unless the deployment puts it on a private network. */
  CONSOLE_HOST: z.string().default("127.0.0.1"),
  /** The gateway the MCP tools call, as the MCP client: any replica (`http://gateway:8080` in a deployment). */
  CONSOLE_GATEWAY_URL: env.url().default(DEFAULT_GATEWAY_URL),
  /**
   * The bearer token of `POST /v1/status/probes`, where `router probe` reports uptime; unset refuses
   * every report. Only the probes and this service hold it.
   */
  ROUTER_PROBE_TOKEN: z.string().min(32, "at least 32 characters (openssl rand -base64 32)").optional(),
  /** The built dashboard (its `index.html` and `assets/`); default the package's own `dashboard/dist`. */
  CONSOLE_DASHBOARD_DIR: z.string().optional(),
  /** Where people reach this deployment: invitation links and sign-in redirects. Unset: CONSOLE_GATEWAY_URL. */
  ROUTER_PUBLIC_URL: z.string().url().optional(),
  /** The ledger's gRPC address: what keys and workspaces have spent. */
  LEDGER_GRPC_ADDR: z.string().default("127.0.0.1:50052"),
  GRPC_DEADLINE_MS: z.coerce.number().int().min(1).max(60_000).default(1000),
  ...pkceEnvironment,
  ...signInEnvironment,
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;
