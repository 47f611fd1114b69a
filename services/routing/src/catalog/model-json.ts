import type { Model } from "./catalog-store";

/**
 * A model as the catalog routes show it: the fields of OpenAI's Model object (`id`, `object`,
 * `created`, `owned_by`), which the `openai` SDK's `models.retrieve` and `models.list` read, with
 * the catalog's own fields beside them.
 */
export function modelJson(m: Model) {
  return {
    id: m.id,
    object: "model" as const,
    created: m.created,
    owned_by: authorOf(m.id),
    canonical_slug: m.canonicalSlug,
    name: m.name,
    description: m.description,
    context_length: m.contextLength,
    architecture: m.architecture,
    supported_parameters: m.supportedParameters,
    default_parameters: m.defaultParameters,
    resale_permitted: m.resalePermitted,
    byok_only: m.byokOnly,
    is_free: m.isFree,
    deprecation_date: m.deprecationDate,
    aliases: m.aliases,
  };
}

/**
 * A model in Anthropic's Models API shape (`type`, `id`, `display_name`, `created_at` as RFC 3339),
 * for callers that send `anthropic-version` (the `@anthropic-ai/sdk` client does on every call).
 */
export function anthropicModelJson(m: Model) {
  return {
    type: "model" as const,
    id: m.id,
    display_name: m.name,
    created_at: new Date((m.created ?? 0) * 1000).toISOString().replace(".000Z", "Z"),
    aliases: m.aliases,
  };
}

/** The author part of `author/slug`. */
export function authorOf(id: string): string {
  return id.slice(0, id.indexOf("/"));
}
