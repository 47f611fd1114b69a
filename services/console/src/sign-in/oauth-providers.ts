import type * as OpenIdClient from "openid-client";
import type { BaseClient } from "openid-client";
import type { Logger } from "@router/logging";

/** openid-client is loaded on the first sign-in through a provider: most deployments configure none. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const openIdClient = (): typeof OpenIdClient => require("openid-client") as typeof OpenIdClient;

/** The identity providers a deployment may offer (the product leaves their names open). */
export const OAUTH_PROVIDERS = ["google", "oidc"] as const;
export type OAuthProviderSlug = (typeof OAUTH_PROVIDERS)[number];

export interface OAuthProviderConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export type OAuthProviders = Partial<Record<OAuthProviderSlug, OAuthProviderConfig>>;

export function isOAuthProvider(slug: string): slug is OAuthProviderSlug {
  return (OAUTH_PROVIDERS as readonly string[]).includes(slug);
}

/** What a completed sign-in learnt about the person, from the validated ID token. */
export interface OAuthProfile {
  subject: string;
  name: string | null;
  email: string | null;
  avatarUrl: string | null;
}

/** The values a sign-in carries from its start to its callback (kept in the `rt_oauth` cookie). */
export interface OAuthAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * OpenID Connect clients of the configured identity providers (openid-client). Discovery happens
 * on first use and is kept; a failed discovery is tried again on the next sign-in, so a provider
 * that was down at start-up never stops the gateway.
 */
export class OAuthClients {
  private readonly clients = new Map<OAuthProviderSlug, Promise<BaseClient>>();

  constructor(
    private readonly providers: OAuthProviders,
    /** `<public URL>/v1/auth/oauth/<provider>/callback`, as registered with the provider. */
    private readonly redirectUri: (slug: OAuthProviderSlug) => string,
    private readonly log: Logger,
  ) {}

  configured(): OAuthProviderSlug[] {
    return OAUTH_PROVIDERS.filter((slug) => this.providers[slug] !== undefined);
  }

  isConfigured(slug: string): slug is OAuthProviderSlug {
    return isOAuthProvider(slug) && this.providers[slug] !== undefined;
  }

  private client(slug: OAuthProviderSlug): Promise<BaseClient> {
    let client = this.clients.get(slug);
    if (!client) {
      const config = this.providers[slug];
      if (!config) return Promise.reject(new Error(`${slug} is not configured`));
      client = openIdClient().Issuer.discover(config.issuer).then(
        (issuer) =>
          new issuer.Client({
            client_id: config.clientId,
            client_secret: config.clientSecret,
            redirect_uris: [this.redirectUri(slug)],
            response_types: ["code"],
          }),
      );
      client.catch((err: unknown) => {
        this.clients.delete(slug);
        this.log.warn({ err, provider: slug, issuer: config.issuer }, "console.sign_in.discovery_failed");
      });
      this.clients.set(slug, client);
    }
    return client;
  }

  /** A new sign-in: the provider's authorization URL (code flow, PKCE S256, state, nonce) and what the callback needs back. */
  async start(slug: OAuthProviderSlug): Promise<{ url: string; attempt: OAuthAttempt }> {
    const client = await this.client(slug);
    const { generators } = openIdClient();
    const attempt: OAuthAttempt = { state: generators.state(), nonce: generators.nonce(), codeVerifier: generators.codeVerifier() };
    const url = client.authorizationUrl({
      scope: "openid email profile",
      redirect_uri: this.redirectUri(slug),
      code_challenge: generators.codeChallenge(attempt.codeVerifier),
      code_challenge_method: "S256",
      state: attempt.state,
      nonce: attempt.nonce,
    });
    return { url, attempt };
  }

  /**
   * Exchanges the code (with the PKCE verifier) and validates the response (`iss` when the provider
   * sends it, RFC 9207) and the ID token (issuer, audience, nonce, signature). `params` is the
   * callback's whole query.
   */
  async finish(slug: OAuthProviderSlug, params: Record<string, string>, attempt: OAuthAttempt): Promise<OAuthProfile> {
    const client = await this.client(slug);
    const tokens = await client.callback(
      this.redirectUri(slug),
      params,
      { code_verifier: attempt.codeVerifier, state: attempt.state, nonce: attempt.nonce, response_type: "code" },
    );
    const claims: Record<string, unknown> = { ...tokens.claims() };
    const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v.slice(0, 200) : null);
    // Many providers put profile claims only in the userinfo response; it is asked once, and a
    // failure there leaves them empty rather than failing a sign-in the ID token already proved.
    if (tokens.access_token && !(claims.name && claims.email)) {
      try {
        const info = await client.userinfo(tokens);
        if (info.sub === claims.sub) for (const k of ["name", "email", "picture"]) claims[k] ??= info[k];
      } catch (err) {
        this.log.warn({ err, provider: slug }, "console.sign_in.userinfo_failed");
      }
    }
    return { subject: String(claims.sub), name: text(claims.name), email: text(claims.email), avatarUrl: text(claims.picture) };
  }
}
