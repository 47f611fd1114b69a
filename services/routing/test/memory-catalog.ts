import { CatalogSnapshot } from "../src/catalog/catalog-snapshot";
import type { Endpoint, Model, Provider } from "../src/catalog/catalog-store";

/** One endpoint of an in-memory catalog: prices in USD per million tokens. */
export interface EndpointSpec {
  model: string;
  provider: string;
  prompt: number;
  completion: number;
  quantization?: string | null;
  supportedParameters?: string[];
  zdr?: boolean;
  noTraining?: boolean;
  deploymentRegion?: string | null;
}

const usd = (n: number) => BigInt(Math.round(n * 1e9));

/**
 * A catalog snapshot built in memory, for unit tests of Plan that need no database: each named
 * provider and model exists; endpoint ids are `ep_<provider>_<model>`.
 */
export function memoryCatalog(
  specs: EndpointSpec[],
  extraModels: string[] = [],
  aliases: Record<string, readonly string[]> = {},
): CatalogSnapshot {
  const providers: Provider[] = [...new Set(specs.map((s) => s.provider))].map((slug) => ({
    slug,
    name: slug,
    hqCountry: null,
    datacenters: null,
    privacyPolicyUrl: null,
    tosUrl: null,
    statusPageUrl: null,
    apiFamily: "openai",
    baseUrl: `https://${slug}.example/v1`,
    selfHosted: false,
  }));
  const models: Model[] = [...new Set([...specs.map((s) => s.model), ...extraModels])].map((id) => ({
    id,
    canonicalSlug: id,
    name: id,
    created: null,
    description: null,
    contextLength: 32_000,
    architecture: null,
    supportedParameters: null,
    defaultParameters: null,
    resalePermitted: "unknown",
    byokOnly: true,
    isFree: false,
    deprecationDate: null,
    aliases: aliases[id] ?? [],
  }));
  const endpoints: Endpoint[] = specs.map((s, i) => ({
    id: endpointId(s.provider, s.model),
    modelId: s.model,
    providerSlug: s.provider,
    upstreamModel: s.model,
    contextLength: 32_000,
    maxOutputTokens: 4096,
    quantization: s.quantization ?? null,
    supportedParameters: s.supportedParameters ?? ["max_tokens"],
    zdr: s.zdr ?? false,
    noTraining: s.noTraining ?? false,
    deploymentRegion: s.deploymentRegion ?? null,
    apiFamily: null,
    price: { promptPerMillion: usd(s.prompt), completionPerMillion: usd(s.completion), cachedPromptPerMillion: null, cacheWrite5mPerMillion: null, cacheWrite1hPerMillion: null, priceVersionId: BigInt(i + 1) },
  }));
  return new CatalogSnapshot({ revision: 1n, providers, models, endpoints });
}

export const endpointId = (provider: string, model: string) => `ep_${provider}_${model.replace(/[^a-z0-9]+/g, "-")}`;
