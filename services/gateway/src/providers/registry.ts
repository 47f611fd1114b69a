import { anthropicAdapter } from "./anthropic";
import { googleAdapter } from "./google";
import { openAiCompatibleAdapter } from "./openai-compatible";
import { PROVIDER_FAMILY } from "./supported";
import type { ApiFamily, ProviderAdapter } from "./types";

const openAiBySlug = new Map<string, ProviderAdapter>();

function isFamily(v: string): v is ApiFamily {
  return v === "openai" || v === "anthropic" || v === "google";
}

/**
 * The adapter for an endpoint: by the catalog's `api_family`, else by the provider's known family.
 * OpenAI-compatible adapters differ per provider (accepted fields), so they are keyed by slug.
 * Returns null when neither names a family the gateway speaks.
 */
export function adapterFor(apiFamily: string, providerSlug: string): ProviderAdapter | null {
  const family = isFamily(apiFamily) ? apiFamily : (PROVIDER_FAMILY as Record<string, ApiFamily | undefined>)[providerSlug];
  switch (family) {
    case "anthropic":
      return anthropicAdapter;
    case "google":
      return googleAdapter;
    case "openai": {
      let adapter = openAiBySlug.get(providerSlug);
      if (!adapter) {
        adapter = openAiCompatibleAdapter(providerSlug);
        openAiBySlug.set(providerSlug, adapter);
      }
      return adapter;
    }
    default:
      return null;
  }
}
