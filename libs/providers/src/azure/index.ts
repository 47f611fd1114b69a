import type { AzureCredential } from "../cloud-credentials";
import { openAiEmbeddings, parseOpenAiEmbeddings } from "../openai-compatible/embeddings";
import { OPENAI_PROFILES } from "../openai-compatible/profiles";
import { buildOpenAiNativeRequest, buildOpenAiRequest } from "../openai-compatible/request";
import { parseOpenAiCompletion, parseOpenAiError } from "../openai-compatible/response";
import { createOpenAiStreamDecoder } from "../openai-compatible/stream";
import { UnsupportedRequest, type ProviderAdapter, type UpstreamHttpRequest, type UpstreamTarget } from "../types";
import { EntraTokens } from "./entra-tokens";

/**
 * Azure OpenAI: OpenAI's own wire format, sent to the organisation's resource. The deployment that
 * serves the model is in the path and the API version in the query (`api-version`), or, on the v1
 * API, the deployment is the body's `model`. Proof is the `api-key` header, or an Entra ID bearer
 * token minted from the credential's client secret.
 */

// Azure OpenAI takes what OpenAI's own API takes.
const profile = OPENAI_PROFILES.openai!;
const embeddings = openAiEmbeddings(profile);
/**
 * The catalog's base URL for Azure, which stands for "the resource's own endpoint": any other base
 * URL is the operator's override (a proxy in front of Azure, a test's fake) and wins.
 */
export const AZURE_CATALOG_BASE_URL = "https://openai.azure.com";
const entra = new EntraTokens();

function azureOf(target: UpstreamTarget): AzureCredential {
  if (target.cloud?.provider !== "azure") throw new UnsupportedRequest("provider", "an Azure OpenAI endpoint needs an Azure credential");
  return target.cloud;
}

/** The deployment serving the catalog model; the dispatcher only pairs a credential with models it names. */
function deploymentOf(c: AzureCredential, target: UpstreamTarget): string {
  const deployment = c.deployments[target.modelId];
  if (!deployment) throw new UnsupportedRequest("model", `this Azure resource has no deployment for ${target.modelId}`);
  return deployment;
}

/**
 * The target with the deployment as the model's name: the body's `model` is what the v1 API routes
 * by, and the dated API, which routes by the path, ignores it.
 */
function deployed(target: UpstreamTarget): UpstreamTarget {
  return { ...target, upstreamModel: deploymentOf(azureOf(target), target) };
}

/** Points a request built for OpenAI at the resource's deployment, with the resource's key. */
function atDeployment(req: UpstreamHttpRequest, target: UpstreamTarget, operation: "chat/completions" | "embeddings"): UpstreamHttpRequest {
  const c = azureOf(target);
  const { authorization: _bearer, ...headers } = req.headers;
  if (c.api_key) headers["api-key"] = c.api_key;
  const base = target.baseUrl.replace(/\/+$/, "") === AZURE_CATALOG_BASE_URL ? c.endpoint : target.baseUrl.replace(/\/+$/, "");
  let url: URL;
  if (c.api_version === "v1" || c.api_version === "preview") {
    url = new URL(`${base}/openai/v1/${operation}`);
    if (c.api_version === "preview") url.searchParams.set("api-version", "preview");
  } else {
    url = new URL(`${base}/openai/deployments/${encodeURIComponent(target.upstreamModel)}/${operation}`);
    url.searchParams.set("api-version", c.api_version);
  }
  return { url, headers, body: req.body };
}

async function authorize(req: UpstreamHttpRequest, target: UpstreamTarget, signal: AbortSignal): Promise<UpstreamHttpRequest> {
  const c = azureOf(target);
  if (!c.entra) return req;
  const token = await entra.token(c.entra, signal);
  return { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
}


export const azureOpenAiAdapter: ProviderAdapter = {
  family: "openai",
  buildRequest: (req, target, stream) => {
    const t = deployed(target);
    return atDeployment(buildOpenAiRequest(req, t, stream, profile), t, "chat/completions");
  },
  buildNativeRequest: (native, req, target, stream) => {
    const t = deployed(target);
    return atDeployment(buildOpenAiNativeRequest(native, req, t, stream, profile), t, "chat/completions");
  },
  authorize,
  parseCompletion: parseOpenAiCompletion,
  createStreamDecoder: createOpenAiStreamDecoder,
  parseError: parseOpenAiError,
  embeddings: {
    buildRequest: (req, target) => {
      const t = deployed(target);
      return atDeployment(embeddings.buildRequest(req, t), t, "embeddings");
    },
    parse: parseOpenAiEmbeddings,
  },
};
