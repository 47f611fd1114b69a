import type { VertexCredential } from "../cloud-credentials";
import type { UpstreamTarget } from "../types";

/** The credential document of a Vertex AI endpoint; any other credential cannot call it. */
export function vertexCredentialOf(target: UpstreamTarget): VertexCredential {
  const cloud = target.cloud;
  if (cloud?.provider !== "vertex") throw new Error(`${target.providerSlug} needs a Vertex AI credential (project, region, service account)`);
  return cloud;
}

/**
 * The API root for a region. The catalog's base URL names the region as `{region}`
 * (`https://{region}-aiplatform.googleapis.com/v1`); the global region's host has none
 * (`https://aiplatform.googleapis.com/v1`). A base URL without the placeholder (an operator's
 * Private Service Connect endpoint, a test's fake) is used as it is; the region is in the path.
 */
export function vertexApiRoot(baseUrl: string, region: string): string {
  let base = baseUrl.replace(/\/+$/, "");
  if (base.includes("{region}")) base = region === "global" ? base.replace("{region}-", "").replace("{region}.", "") : base.replaceAll("{region}", region);
  return /\/v1(beta1)?$/.test(base) ? base : `${base}/v1`;
}

/**
 * `{root}/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`.
 * The region is the endpoint's (the catalog's), else the credential's.
 */
export function vertexModelUrl(target: UpstreamTarget, publisher: "google" | "anthropic", method: string): URL {
  const cloud = vertexCredentialOf(target);
  const region = target.region ?? cloud.region;
  // Claude's ids carry their date after `@` (claude-sonnet-4-5@20250929), which Vertex writes as is.
  const model = encodeURIComponent(target.upstreamModel).replaceAll("%40", "@");
  const path = `/projects/${encodeURIComponent(cloud.project)}/locations/${encodeURIComponent(region)}/publishers/${publisher}/models/${model}:${method}`;
  return new URL(vertexApiRoot(target.baseUrl, region) + path);
}

/**
 * Whether the gateway may send a service account's grant to its `token_uri`. The key is the
 * organisation's, so the gateway would otherwise POST to any host it names: only Google's own token
 * hosts (`oauth2.googleapis.com`, Private Service Connect's `*.p.googleapis.com`), or the origin of
 * the operator's own Vertex base URL (a proxy, a test's fake), which the operator chose.
 */
export function tokenUriAllowed(tokenUri: string | undefined, baseUrl: string): boolean {
  if (!tokenUri) return true;
  let uri: URL;
  try {
    uri = new URL(tokenUri);
  } catch {
    return false;
  }
  if (uri.protocol === "https:" && (uri.hostname === "oauth2.googleapis.com" || uri.hostname.endsWith(".p.googleapis.com"))) return true;
  // The catalog's base names `{region}`; any other base is the operator's.
  if (baseUrl.includes("{region}")) return false;
  try {
    return uri.origin === new URL(baseUrl).origin;
  } catch {
    return false;
  }
}
