import { generateKeyPairSync, randomBytes, verify, type KeyObject } from "node:crypto";
import { anthropicWire, refusalOf } from "./anthropic";
import { embeddingDimensions, fakeEmbedding, fakeEmbeddingTokens } from "./embeddings";
import { geminiWire } from "./google";
import type { FakeUpstream, FakeUpstreamOptions, RecordedRequest } from "./script";
import { startFakeProvider, type ProviderWire } from "./server";

/** Google's token endpoint: the audience every service account's JWT-bearer assertion must name. */
export const GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
const TOKEN_SECONDS = 3599;

/** A service account's JSON key file, as the Google Cloud console downloads it. */
export interface ServiceAccountKey {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
}

export interface TestServiceAccount {
  key: ServiceAccountKey;
  publicKey: KeyObject;
}

/** A fresh service account (an RSA key pair) whose key sends its token requests to `tokenUri`. */
export function testServiceAccount(opts: { tokenUri: string; project?: string; name?: string }): TestServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const project = opts.project ?? "router-test-project";
  const name = opts.name ?? `router-${randomBytes(3).toString("hex")}`;
  return {
    publicKey,
    key: {
      type: "service_account",
      project_id: project,
      private_key_id: randomBytes(20).toString("hex"),
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      client_email: `${name}@${project}.iam.gserviceaccount.com`,
      client_id: String(BigInt(`0x${randomBytes(8).toString("hex")}`)),
      auth_uri: "https://accounts.google.com/o/oauth2/auth",
      token_uri: opts.tokenUri,
    },
  };
}

export interface FakeVertexOptions extends FakeUpstreamOptions {
  /** The project the fake serves; a request for another is refused as Vertex AI refuses it (403). */
  project?: string;
  /** Regions the fake serves; another region's model is not found (404). */
  regions?: string[];
}

export interface FakeVertex extends FakeUpstream {
  project: string;
  regions: string[];
  /** `POST {origin}/token`, the fake's own token endpoint. */
  tokenUri: string;
  /** A service account whose assertions the token endpoint accepts. */
  serviceAccount(): ServiceAccountKey;
  /** Model requests in `region` answer 429 RESOURCE_EXHAUSTED until `throttle(region, false)`. */
  throttle(region: string, on?: boolean): void;
  /** Access tokens the token endpoint minted. */
  minted(): number;
  /** Requests to the models (the token endpoint's left out). */
  modelRequests(): RecordedRequest[];
}

// `/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`
const ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):(generateContent|streamGenerateContent|rawPredict|streamRawPredict|predict)$/;

interface Parsed {
  project: string;
  region: string;
  publisher: "google" | "anthropic";
  model: string;
  method: string;
}

function parse(path: string): Parsed | null {
  const m = ROUTE.exec(path);
  if (!m) return null;
  return { project: m[1]!, region: m[2]!, publisher: m[3] as Parsed["publisher"], model: decodeURIComponent(m[4]!), method: m[5]! };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const googleError = (status: number, code: string, message: string) => ({ status, code, message, body: { error: { code: status, message, status: code } } });
const anthropicError = (message: string) => ({ status: 400, code: "invalid_request_error", message, body: { type: "error", error: { type: "invalid_request_error", message } } });

/** Vertex names Claude's date after `@`; the Anthropic fake's limits know the dated id. */
const anthropicModelId = (model: string) => model.replace("@", "-");

/** The request as the Anthropic fake reads it: with the model the path names. */
const asAnthropicRequest = (req: RecordedRequest, model: string): RecordedRequest => ({
  ...req,
  body: { ...(isObject(req.body) ? req.body : {}), model: anthropicModelId(model) },
});

/**
 * Verifies a JWT-bearer grant as Google's token endpoint does, as far as a test needs: RS256 signed
 * by the key of a service account it knows (by `iss`), Google's token URL as audience, a scope, an
 * expiry at most an hour after issue that has not passed. Returns the error Google answers, or null.
 */
function grantRefusal(assertion: string, trusted: Map<string, KeyObject>): string | null {
  const [header, payload, signature] = assertion.split(".");
  if (!header || !payload || !signature) return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.";
  let h: Record<string, unknown>;
  let p: Record<string, unknown>;
  try {
    h = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>;
    p = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return "Invalid JWT: not a JSON Web Token.";
  }
  if (h.alg !== "RS256") return "Invalid JWT: the signing algorithm must be RS256.";
  const key = typeof p.iss === "string" ? trusted.get(p.iss) : undefined;
  if (!key) return "Invalid grant: account not found";
  if (!verify("RSA-SHA256", Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, "base64url"))) return "Invalid JWT Signature.";
  if (p.aud !== GOOGLE_TOKEN_AUDIENCE) return "Invalid JWT: Failed audience check.";
  if (typeof p.scope !== "string" || !p.scope.split(" ").includes(CLOUD_PLATFORM)) return "Invalid OAuth scope or ID token audience provided.";
  const now = Math.floor(Date.now() / 1000);
  const iat = typeof p.iat === "number" ? p.iat : NaN;
  const exp = typeof p.exp === "number" ? p.exp : NaN;
  if (!(exp > now && iat <= now + 300 && exp - iat <= 3600)) return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.";
  return null;
}

/**
 * Google Vertex AI for one project: its own OAuth token endpoint (`POST /token`, JWT-bearer grants
 * from service accounts it was given), and the publisher models' routes, which take only tokens it
 * minted: Gemini (`generateContent`, `streamGenerateContent?alt=sse`) answering as the Gemini fake,
 * Claude (`rawPredict`, `streamRawPredict`) answering as the Anthropic fake, and text embeddings
 * (`predict`). Refuses what Vertex AI refuses: another project (403) or region (404), a Claude body
 * with `model` or without `anthropic_version: "vertex-2023-10-16"`, more than one text for
 * gemini-embedding-001.
 */
export async function startFakeVertex(opts: FakeVertexOptions = {}): Promise<FakeVertex> {
  const project = opts.project ?? "router-test-project";
  const regions = opts.regions ?? ["europe-west4", "us-central1", "europe-west1", "us-east5"];
  const trusted = new Map<string, KeyObject>();
  const tokens = new Map<string, number>();
  const throttled = new Set<string>();

  const wire: ProviderWire = {
    basePath: "/v1",
    route(method, path, query, body) {
      const p = method === "POST" ? parse(path) : null;
      if (!p) return null;
      if (p.publisher === "google") return { stream: p.method === "streamGenerateContent" && query.alt === "sse", model: p.model };
      return { stream: p.method === "streamRawPredict" && isObject(body) && body.stream === true, model: p.model };
    },
    reject(req) {
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
      const expires = auth ? tokens.get(auth[1]!) : undefined;
      if (expires === undefined || expires < Date.now()) {
        return googleError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.");
      }
      const p = parse(req.path)!;
      const resource = `projects/${p.project}/locations/${p.region}/publishers/${p.publisher}/models/${p.model}`;
      if (p.project !== project) return googleError(403, "PERMISSION_DENIED", `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`);
      if (!regions.includes(p.region)) return googleError(404, "NOT_FOUND", `Publisher Model \`${resource}\` not found.`);
      if (throttled.has(p.region)) {
        return googleError(429, "RESOURCE_EXHAUSTED", `Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model with base model: ${p.model}. Please submit a quota increase request.`);
      }
      const body = isObject(req.body) ? req.body : {};
      if (p.publisher === "anthropic") {
        if (p.method !== "rawPredict" && p.method !== "streamRawPredict") return googleError(400, "INVALID_ARGUMENT", `${p.method} is not served for ${resource}.`);
        if (body.model !== undefined) return anthropicError("model: Extra inputs are not permitted");
        if (body.anthropic_version !== "vertex-2023-10-16") return anthropicError("anthropic_version: Input should be 'vertex-2023-10-16'");
        if ((p.method === "streamRawPredict") !== (body.stream === true)) return anthropicError(`stream: ${p.method} takes ${p.method === "streamRawPredict" ? "stream: true" : "no stream"}`);
        const refused = refusalOf({ ...body, model: anthropicModelId(p.model) });
        return refused ? anthropicError(refused.message) : null;
      }
      if (p.method === "rawPredict" || p.method === "streamRawPredict") return googleError(400, "INVALID_ARGUMENT", `${p.method} is not served for ${resource}.`);
      if (p.method === "predict") {
        const instances = Array.isArray(body.instances) ? body.instances : null;
        if (!instances?.length || !instances.every((i) => isObject(i) && typeof i.content === "string")) {
          return googleError(400, "INVALID_ARGUMENT", "Invalid JSON payload: every instance needs `content` text.");
        }
        if (p.model.startsWith("gemini-embedding") && instances.length > 1) {
          return googleError(400, "INVALID_ARGUMENT", `Unable to submit request because ${p.model} supports only one instance per request.`);
        }
        return null;
      }
      // Vertex AI, unlike the Gemini API, needs every content's role.
      const contents = Array.isArray(body.contents) ? body.contents : [];
      if (contents.some((c) => !isObject(c) || (c.role !== "user" && c.role !== "model"))) {
        return googleError(400, "INVALID_ARGUMENT", "Please use a valid role: user, model.");
      }
      return null;
    },
    errorBody: (status, code, message) => geminiWire.errorBody(status, code, message),
    json(reply, req, model) {
      const p = parse(req.path)!;
      if (p.method === "predict") {
        const instances = (req.body as { instances: Array<{ content: string }> }).instances;
        const dims = embeddingDimensions(reply, (req.body as { parameters?: { outputDimensionality?: unknown } }).parameters?.outputDimensionality);
        return {
          predictions: instances.map((i) => ({
            embeddings: { values: fakeEmbedding(i.content, dims), statistics: { token_count: fakeEmbeddingTokens(reply, [i.content]), truncated: false } },
          })),
          metadata: { billableCharacterCount: instances.reduce((n, i) => n + i.content.length, 0) },
        };
      }
      if (p.publisher === "anthropic") return anthropicWire.json(reply, asAnthropicRequest(req, model), anthropicModelId(model));
      return geminiWire.json(reply, req, model);
    },
    frames(reply, req, model) {
      const p = parse(req.path)!;
      if (p.publisher === "anthropic") return anthropicWire.frames(reply, asAnthropicRequest(req, model), anthropicModelId(model));
      return geminiWire.frames(reply, req, model);
    },
    errorFrame: (code, message) => geminiWire.errorFrame(code, message),
    otherRoute(req) {
      if (req.path !== "/token") return null;
      if (req.method !== "POST") return { status: 405, body: { error: "invalid_request", error_description: "POST only" } };
      const form = new URLSearchParams(typeof req.body === "string" ? req.body : "");
      if (form.get("grant_type") !== JWT_BEARER) return { status: 400, body: { error: "unsupported_grant_type", error_description: "Invalid grant_type: " } };
      const refused = grantRefusal(form.get("assertion") ?? "", trusted);
      if (refused) return { status: 400, body: { error: "invalid_grant", error_description: refused } };
      const token = `ya29.fake-${randomBytes(24).toString("base64url")}`;
      tokens.set(token, Date.now() + TOKEN_SECONDS * 1000);
      return { status: 200, body: { access_token: token, expires_in: TOKEN_SECONDS, token_type: "Bearer" } };
    },
  };

  const fake = await startFakeProvider(wire, opts);
  const tokenUri = `${fake.origin}/token`;
  return {
    ...fake,
    project,
    regions,
    tokenUri,
    serviceAccount() {
      const account = testServiceAccount({ tokenUri, project });
      trusted.set(account.key.client_email, account.publicKey);
      return account.key;
    },
    throttle(region, on = true) {
      if (on) throttled.add(region);
      else throttled.delete(region);
    },
    minted: () => tokens.size,
    modelRequests: () => fake.requests.filter((r) => r.path !== "/token"),
  };
}
