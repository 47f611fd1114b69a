import { anthropicAdapter } from "./anthropic";
import { CLOUD_ADAPTERS } from "./clouds";
import { googleAdapter } from "./google";
import { openAiCompatibleAdapter } from "./openai-compatible";
import { PROVIDER_FAMILY } from "./supported";
import type { ApiFamily, ProviderAdapter } from "./types";

const openAiBySlug = new Map<string, ProviderAdapter>();

function isFamily(v: string): v is ApiFamily {
  return v === "openai" || v === "anthropic" || v === "google" || v === "bedrock";
}

/**
 * The adapter for an endpoint: by the catalog's `api_family`, else by the provider's known family.
 * OpenAI-compatible adapters differ per provider (accepted fields), so they are keyed by slug; a
 * cloud has one adapter per format it serves. Returns null when neither names a family the gateway
 * speaks (or the cloud does not serve it).
 */
export function adapterFor(apiFamily: string, providerSlug: string): ProviderAdapter | null {
  const family = isFamily(apiFamily) ? apiFamily : (PROVIDER_FAMILY as Record<string, ApiFamily | undefined>)[providerSlug];
  const cloud = CLOUD_ADAPTERS[providerSlug];
  if (cloud) return (family && cloud[family]) || null;
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
