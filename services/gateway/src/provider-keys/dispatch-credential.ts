import type { CloudCredential } from "@router/providers";

/**
 * A provider credential opened for dispatch: the decrypted key never leaves the gateway process and
 * is never logged or returned by a route.
 */
export interface DispatchCredential {
  id: string;
  providerSlug: string;
  /** The provider's API key; empty for a cloud credential, which is `cloud` instead. */
  apiKey: string;
  /** A cloud's credential document (Azure OpenAI, Bedrock, Vertex AI); null for an API key. */
  cloud?: CloudCredential | null;
  tier: "prioritized" | "fallback";
  priority: number;
  fallbackPolicy: "platform" | "none_for_models" | "none_for_provider";
  /** Which models this credential may serve; shape documented in provider-keys (allow/deny lists). */
  modelFilter: Record<string, unknown>;
}

/** What the chat path needs from the credential store. */
export interface CredentialSource {
  /** Every enabled credential of the organisation, decrypted, in tier-then-priority order. */
  enabledFor(orgId: string): Promise<DispatchCredential[]>;
  /** Whether the credential may serve `modelId` (applies `model_filter`). */
  allows(credential: DispatchCredential, modelId: string): boolean;
  /** Records use; must not delay the request (fire and forget with error logging is fine here). */
  markUsed(credentialId: string, at: Date): void;
}
