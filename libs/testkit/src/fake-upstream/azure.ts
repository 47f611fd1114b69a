import { openAiWire } from "./openai";
import type { FakeUpstream, FakeUpstreamOptions, RecordedRequest } from "./script";
import { startFakeProvider, type ProviderWire } from "./server";

/** Dated API versions the fake accepts, as the real service lists its GA and preview versions. */
const API_VERSIONS = new Set(["2024-06-01", "2024-10-21", "2025-01-01-preview", "2025-04-01-preview"]);

const DEPLOYMENT_PATH = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/;
const V1_PATH = /^\/openai\/v1\/(chat\/completions|embeddings)$/;

export interface FakeAzureOptions extends FakeUpstreamOptions {
  /** The resource's keys (a resource has two, for rotation): `api-key` must carry one (or a bearer token from `tokens`). */
  apiKeys?: string[];
  /** Bearer tokens the resource accepts (minted by the fake Entra ID). */
  tokens?: () => Set<string>;
  /** Deployment name → the model it runs; a request for another deployment is a 404 DeploymentNotFound. */
  deployments: Record<string, string>;
}

/**
 * An Azure OpenAI resource: OpenAI's bodies and streams, addressed by deployment and `api-version`,
 * authenticated by `api-key` or an Entra ID bearer token. It refuses what the service refuses: an
 * unknown or missing API version (404 / 400), an unknown deployment (404 DeploymentNotFound), a
 * missing or wrong key (401).
 */
export function azureWire(opts: FakeAzureOptions): ProviderWire {
  const deploymentOf = (path: string, body: unknown): string | null => {
    const dated = DEPLOYMENT_PATH.exec(path);
    if (dated) return decodeURIComponent(dated[1]!);
    if (V1_PATH.test(path)) return ((body ?? {}) as { model?: string }).model ?? null;
    return null;
  };
  return {
    ...openAiWire,
    basePath: "",
    route(method, path, _query, body) {
      const dated = DEPLOYMENT_PATH.exec(path);
      const v1 = V1_PATH.exec(path);
      if (method !== "POST" || (!dated && !v1)) return null;
      const operation = (dated ? dated[2] : v1![1])!;
      const deployment = deploymentOf(path, body) ?? "unknown";
      return { stream: operation === "chat/completions" && (body as { stream?: boolean })?.stream === true, model: opts.deployments[deployment] ?? deployment };
    },
    reject(req: RecordedRequest) {
      const key = req.headers["api-key"];
      const bearer = (req.headers["authorization"] ?? "").replace(/^Bearer /, "");
      const authorised = (key !== undefined && (opts.apiKeys ?? []).includes(key)) || (bearer !== "" && (opts.tokens?.().has(bearer) ?? false));
      if (!authorised) {
        return {
          status: 401,
          code: "401",
          message: "Access denied due to invalid subscription key or wrong API endpoint.",
          body: { error: { code: "401", message: "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource." } },
        };
      }
      if (DEPLOYMENT_PATH.test(req.path)) {
        const version = req.query["api-version"];
        if (!version) return { status: 400, code: "BadRequest", message: "Missing API version parameter." };
        if (!API_VERSIONS.has(version)) return { status: 404, code: "404", message: "Resource not found" };
      }
      const deployment = deploymentOf(req.path, req.body);
      if (!deployment || !(deployment in opts.deployments)) {
        return {
          status: 404,
          code: "DeploymentNotFound",
          message: "The API deployment for this resource does not exist.",
        };
      }
      return null;
    },
    // OpenAI's bodies, read by operation (the path's tail) rather than by OpenAI's own paths.
    json(reply, req, model) {
      return openAiWire.json(reply, { ...req, path: req.path.endsWith("/embeddings") ? "/embeddings" : "/chat/completions" }, model);
    },
  };
}

/** Starts a fake Azure OpenAI resource; its `url` is the resource endpoint (`https://<name>.openai.azure.com`). */
export function startFakeAzureOpenAi(opts: FakeAzureOptions): Promise<FakeUpstream> {
  return startFakeProvider(azureWire(opts), opts);
}
