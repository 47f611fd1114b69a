import { createHash } from "node:crypto";
import { JWT } from "google-auth-library";
import type { VertexCredential } from "../cloud-credentials";
import { UpstreamAuthError } from "../types";

/** The scope Vertex AI takes (its own, `aiplatform`, is not offered to service accounts). */
export const VERTEX_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/**
 * Google's token endpoint. The library posts every JWT-bearer grant here and signs the assertion
 * for it as its audience, which Google requires even when the grant goes elsewhere.
 */
export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

export type ServiceAccount = VertexCredential["service_account"];

/** Mints access tokens for one service account; the library caches each until shortly before it expires. */
export interface AccessTokenSource {
  accessToken(): Promise<string | null | undefined>;
}

export interface VertexAccessTokensOptions {
  /** Service accounts whose clients are kept (each holds its cached token); the least recently used goes first. */
  maxClients?: number;
  /** Makes the client of a service account; tests count the clients made. */
  createSource?: (account: ServiceAccount) => AccessTokenSource;
}

/**
 * Bearer tokens for Vertex AI, one google-auth-library client per service account (keyed by a hash
 * of the key, so two credentials with the same key, say one per region, share a token). Refused or
 * failed mints become `UpstreamAuthError` with a short reason: the library's error carries the signed
 * assertion in its request and the token endpoint's own text, neither of which may be logged.
 */
export class VertexAccessTokens {
  private readonly sources = new Map<string, AccessTokenSource>();
  private readonly maxClients: number;
  private readonly createSource: (account: ServiceAccount) => AccessTokenSource;

  constructor(opts: VertexAccessTokensOptions = {}) {
    this.maxClients = opts.maxClients ?? 256;
    this.createSource = opts.createSource ?? serviceAccountTokenSource;
  }

  /** How many service accounts have a client now. */
  get size(): number {
    return this.sources.size;
  }

  async token(account: ServiceAccount, signal: AbortSignal): Promise<string> {
    const source = this.sourceOf(account);
    let token: string | null | undefined;
    try {
      token = await abortable(source.accessToken(), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new UpstreamAuthError(reasonOf(err));
    }
    if (!token) throw new UpstreamAuthError("token_endpoint_gave_no_token");
    return token;
  }

  private sourceOf(account: ServiceAccount): AccessTokenSource {
    const key = createHash("sha256")
      .update([account.client_email, account.private_key_id ?? "", account.token_uri ?? "", account.private_key].join("\0"))
      .digest("hex");
    const known = this.sources.get(key);
    if (known) {
      // Most recently used last: eviction takes the first.
      this.sources.delete(key);
      this.sources.set(key, known);
      return known;
    }
    const made = this.createSource(account);
    this.sources.set(key, made);
    while (this.sources.size > this.maxClients) {
      const oldest = this.sources.keys().next().value as string;
      this.sources.delete(oldest);
    }
    return made;
  }
}

/**
 * A JWT client for the service account. When the key names another token endpoint (Private
 * Service Connect, a test's fake) the grant goes there, with Google's endpoint still its audience.
 */
export function serviceAccountTokenSource(account: ServiceAccount): AccessTokenSource {
  const client = new JWT({
    email: account.client_email,
    key: account.private_key,
    ...(account.private_key_id ? { keyId: account.private_key_id } : {}),
    scopes: [VERTEX_SCOPE],
    // Node's own fetch: gaxios would otherwise import node-fetch dynamically on the first call.
    transporterOptions: { fetchImplementation: fetch, timeout: 15_000 },
  });
  const tokenUri = account.token_uri;
  if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
    client.transporter.interceptors.request.add({
      resolved: (options) => {
        if (options.url.href === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return Promise.resolve(options);
      },
    });
  }
  return {
    accessToken: async () => (await client.getAccessToken()).token,
  };
}

/** A short code for a failed mint; never the endpoint's text. */
function reasonOf(err: unknown): string {
  const e = err as { response?: { status?: unknown }; code?: unknown; message?: unknown };
  const status = typeof e?.response?.status === "number" ? e.response.status : null;
  if (status !== null) return status >= 500 ? `token_endpoint_error_${status}` : `token_refused_${status}`;
  const message = typeof e?.message === "string" ? e.message : "";
  // Signing failed before anything was sent: the key is not a usable RSA key.
  if (/key|PEM|asn1|DECODER|sign/i.test(message) && !/ECONN|ENOTFOUND|ETIMEDOUT|fetch/i.test(message)) return "private_key_unusable";
  return "token_endpoint_unreachable";
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: Error) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
