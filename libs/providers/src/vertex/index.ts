import { anthropicNativeBody } from "../anthropic/native-request";
import { buildAnthropicRequest } from "../anthropic/request";
import { parseAnthropicCompletion } from "../anthropic/response";
import { createAnthropicStreamDecoder } from "../anthropic/stream";
import { buildGeminiRequest } from "../google/request";
import { parseGeminiCompletion } from "../google/response";
import { createGeminiStreamDecoder } from "../google/stream";
import { UpstreamAuthError, type ProviderAdapter, type UpstreamHttpRequest, type UpstreamTarget } from "../types";
import { VertexAccessTokens } from "./access-tokens";
import { vertexEmbeddings } from "./embeddings";
import { parseVertexError } from "./errors";
import { tokenUriAllowed, vertexCredentialOf, vertexModelUrl } from "./urls";

/** What Vertex AI wants in a Claude body instead of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/**
 * The Anthropic builders read the model's name to fit thinking to it; Vertex writes Claude's date
 * after `@` (claude-sonnet-4-5@20250929) where Anthropic writes `-`.
 */
const asAnthropicTarget = (target: UpstreamTarget): UpstreamTarget => ({ ...target, upstreamModel: target.upstreamModel.replace("@", "-") });

/** A Messages body as Vertex AI takes it: the model is in the URL, the version in the body. */
function claudeOnVertex(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  const { model: _model, ...rest } = body;
  const headers: Record<string, string> = { "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" };
  // Vertex AI takes Anthropic's beta flags as the same header.
  if (target.vendorBeta) headers["anthropic-beta"] = target.vendorBeta;
  return {
    url: vertexModelUrl(target, "anthropic", stream ? "streamRawPredict" : "rawPredict"),
    headers,
    body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }),
  };
}

/** The adapters of Vertex AI, sharing one pool of access tokens. */
export function vertexAdapters(tokens: VertexAccessTokens): { google: ProviderAdapter; anthropic: ProviderAdapter } {
  const authorize = async (req: UpstreamHttpRequest, target: UpstreamTarget, signal: AbortSignal): Promise<UpstreamHttpRequest> => {
    const account = vertexCredentialOf(target).service_account;
    if (!tokenUriAllowed(account.token_uri, target.baseUrl)) throw new UpstreamAuthError("token_uri_not_google");
    const token = await tokens.token(account, signal);
    return { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
  };

  /** Gemini on Vertex AI: the Gemini API's body and answers at the publisher model's URL, with a bearer token for the key. */
  const google: ProviderAdapter = {
    family: "google",
    authorize,
    buildRequest(req, target, stream) {
      const built = buildGeminiRequest(req, target, stream);
      const { "x-goog-api-key": _key, ...headers } = built.headers;
      return { url: vertexModelUrl(target, "google", stream ? "streamGenerateContent?alt=sse" : "generateContent"), headers, body: built.body };
    },
    parseCompletion: parseGeminiCompletion,
    createStreamDecoder: createGeminiStreamDecoder,
    parseError: parseVertexError,
    embeddings: vertexEmbeddings,
  };

  /** Claude on Vertex AI: Anthropic's Messages body, answers and events through `rawPredict` / `streamRawPredict`. */
  const anthropic: ProviderAdapter = {
    family: "anthropic",
    authorize,
    buildRequest(req, target, stream) {
      const built = buildAnthropicRequest(req, asAnthropicTarget(target), stream);
      return claudeOnVertex(JSON.parse(built.body) as Record<string, unknown>, target, stream);
    },
    // A Messages body goes as the client wrote it (cache_control markers included: Vertex AI caches prompts for Claude).
    buildNativeRequest(native, req, target, stream) {
      return claudeOnVertex(anthropicNativeBody(native, req, asAnthropicTarget(target), stream), target, stream);
    },
    parseCompletion: parseAnthropicCompletion,
    createStreamDecoder: createAnthropicStreamDecoder,
    parseError: parseVertexError,
  };
  return { google, anthropic };
}

/** The gateway's Vertex AI adapters: one token pool for the process. */
export const vertexAccessTokens = new VertexAccessTokens();
const adapters = vertexAdapters(vertexAccessTokens);
export const vertexGeminiAdapter = adapters.google;
export const vertexClaudeAdapter = adapters.anthropic;
