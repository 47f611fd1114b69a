import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import type { UpstreamTarget } from "../providers/types";
import type { Candidate } from "./types";

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
    upstreamModel: candidate.upstreamModel || candidate.modelId,
    apiKey: credential.apiKey,
    maxOutputTokens: candidate.maxOutputTokens,
    vendorBeta,
  };
}
