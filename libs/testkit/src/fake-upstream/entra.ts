import { randomBytes } from "node:crypto";
import { startHttpsReceiver, type HttpsReceiver } from "../https-receiver";

export interface FakeEntra {
  /** `https://127.0.0.1:<port>`: the credential's `authority_host`. */
  authorityHost: string;
  /** Trust this CA in the gateway process (`NODE_EXTRA_CA_CERTS`). */
  caFile: string;
  /** Every access token minted so far: what the fake Azure resource accepts. */
  tokens: Set<string>;
  /** How many tokens were minted (a client that caches mints one). */
  minted(): number;
  close(): Promise<void>;
}

/**
 * Entra ID's v2.0 endpoints for one tenant, over HTTPS as MSAL insists: the OpenID metadata MSAL
 * reads first, and the token endpoint's client-credentials grant, which mints a token only for
 * the registered client and secret and only for Azure OpenAI's scope (else AADSTS errors, as Entra
 * answers them).
 */
export async function startFakeEntra(opts: { tenantId: string; clientId: string; clientSecret: string }): Promise<FakeEntra> {
  const receiver: HttpsReceiver = await startHttpsReceiver();
  const tokens = new Set<string>();
  let minted = 0;
  const base = `${receiver.url}/${opts.tenantId}`;
  const json = (status: number, body: unknown) => ({ status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  receiver.respondWith((req) => {
    const path = req.path.split("?")[0] ?? "";
    if (req.method === "GET" && path === `/${opts.tenantId}/v2.0/.well-known/openid-configuration`) {
      return json(200, {
        issuer: `${base}/v2.0`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        token_endpoint: `${base}/oauth2/v2.0/token`,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        jwks_uri: `${base}/discovery/v2.0/keys`,
        response_types_supported: ["code", "id_token", "token"],
        subject_types_supported: ["pairwise"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    }
    if (req.method === "POST" && path === `/${opts.tenantId}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(req.body);
      if (form.get("grant_type") !== "client_credentials") return json(400, { error: "unsupported_grant_type", error_description: "AADSTS70003" });
      if (form.get("client_id") !== opts.clientId || form.get("client_secret") !== opts.clientSecret) {
        return json(401, { error: "invalid_client", error_description: "AADSTS7000215: Invalid client secret provided.", error_codes: [7000215] });
      }
      if (form.get("scope") !== "https://cognitiveservices.azure.com/.default") {
        return json(400, { error: "invalid_scope", error_description: "AADSTS70011: The provided value for scope is not valid." });
      }
      const token = `eyJ.fake-entra.${randomBytes(16).toString("base64url")}`;
      tokens.add(token);
      minted++;
      return json(200, { token_type: "Bearer", expires_in: 3599, ext_expires_in: 3599, access_token: token });
    }
    return json(404, { error: "not_found" });
  });
  return { authorityHost: receiver.url, caFile: receiver.caFile, tokens, minted: () => minted, close: () => receiver.close() };
}
