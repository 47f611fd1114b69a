import { providerKeys } from "@router/management-api";

/**
 * Providers the gateway has an adapter for: the only slugs a provider credential may name. The
 * provider adapter registry (src/providers/) and the credential routes both read this one list,
 * which the credential routes' description holds (@router/management-api).
 */
export const { PROVIDER_SLUGS, isProviderSlug } = providerKeys;
export type ProviderSlug = providerKeys.ProviderSlug;
