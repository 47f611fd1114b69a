import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import type { UpstreamTarget } from "@router/providers";
import type { Candidate } from "./types";

/**
 * Whether a credential can serve the endpoint at all: a cloud credential only in its own region (an
 * endpoint that declares none, any), and an Azure resource only the models it has a deployment for.
 */
export function credentialServes(credential: DispatchCredential, candidate: Candidate): boolean {
  const cloud = credential.cloud;
  if (!cloud) return true;
  if (candidate.deploymentRegion && cloud.region !== candidate.deploymentRegion) return false;
  return cloud.provider !== "azure" || Object.hasOwn(cloud.deployments, candidate.modelId);
}

/** Whether the organisation holds Azure resources in the endpoint's region, none of which deploys its model. */
export function lacksDeployment(credentials: readonly DispatchCredential[], candidate: Candidate): boolean {
  let inRegion = false;
  for (const c of credentials) {
    if (c.providerSlug !== candidate.providerSlug || c.cloud?.provider !== "azure") continue;
    if (candidate.deploymentRegion && c.cloud.region !== candidate.deploymentRegion) continue;
    if (Object.hasOwn(c.cloud.deployments, candidate.modelId)) return false;
    inRegion = true;
  }
  return inRegion;
}

/**
 * Where and as whom a request for `candidate` goes: the operator's base URL for its provider (a
 * self-hosted server, a test's fake) over the catalog's, and the endpoint's own model name. Every
 * call to a provider (a completion, embeddings, a token count) is addressed by this.
 */
export function upstreamTarget(
  candidate: Candidate,
  credential: DispatchCredential,
  providerBaseUrls: Record<string, string> | undefined,
  vendorBeta: string | null,
): UpstreamTarget {
  return {
    providerSlug: candidate.providerSlug,
    baseUrl: providerBaseUrls?.[candidate.providerSlug] ?? candidate.baseUrl,
    modelId: candidate.modelId,
    upstreamModel: candidate.upstreamModel || candidate.modelId,
    apiKey: credential.apiKey,
    cloud: credential.cloud ?? null,
    region: candidate.deploymentRegion || credential.cloud?.region || null,
    maxOutputTokens: candidate.maxOutputTokens,
    vendorBeta,
  };
}
