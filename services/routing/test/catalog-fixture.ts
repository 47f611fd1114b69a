/** A small catalog whose prices make the expected orderings obvious. Prices in USD per million. */
export function fixtureCatalog() {
  const provider = (slug: string, api_family: string, base_url: string, self_hosted = false) => ({
    slug,
    name: slug[0]!.toUpperCase() + slug.slice(1),
    hq_country: self_hosted ? null : "US",
    datacenters: self_hosted ? null : ["US"],
    privacy_policy_url: self_hosted ? null : `https://${slug}.example/privacy`,
    tos_url: null,
    status_page_url: null,
    api_family,
    base_url,
    self_hosted,
  });
  const model = (id: string, name: string, created: number, context_length: number, extra: Record<string, unknown> = {}) => ({
    id,
    canonical_slug: id,
    name,
    created,
    description: `${name} for tests`,
    context_length,
    architecture: { modality: "text->text", input_modalities: ["text"], output_modalities: ["text"] },
    supported_parameters: ["max_tokens", "temperature"],
    default_parameters: null,
    resale_permitted: "unknown",
    byok_only: true,
    is_free: false,
    deprecation_date: null,
    ...extra,
  });
  const endpoint = (
    provider: string,
    modelId: string,
    prompt: number,
    completion: number,
    cached: number | null = null,
    [cacheWrite5m, cacheWrite1h]: [number | null, number | null] = [null, null],
  ) => ({
    id: `ep_${provider}_${modelId.split("/")[1]!.replace(/[^a-z0-9]+/g, "-")}`,
    model: modelId,
    provider,
    upstream_model: `${provider}-${modelId.split("/")[1]}`,
    context_length: 32768,
    max_output_tokens: 4096,
    pricing: { prompt, completion, cached_prompt: cached, cache_write_5m: cacheWrite5m, cache_write_1h: cacheWrite1h },
    quantization: null,
    supported_parameters: ["max_tokens", "temperature"],
  });
  return {
    version: 1,
    providers: [
      provider("alpha", "openai", "https://api.alpha.example/v1"),
      provider("beta", "anthropic", "https://api.beta.example/v1"),
      provider("gamma", "openai", "https://api.gamma.example/v1"),
      provider("local", "openai", "http://localhost:8000/v1", true),
    ],
    models: [
      model("acme/one", "Acme One", 1_700_000_000, 128_000),
      model("acme/two", "Acme Two", 1_710_000_000, 32_000),
      model("acme/three", "Acme Three", 1_720_000_000, 200_000),
      model("acme/four", "Acme Four", 1_730_000_000, 8_000),
      model("acme/five", "Acme Five", 1_690_000_000, 64_000),
      model("acme/five:free", "Acme Five (free)", 1_690_000_000, 64_000, { is_free: true }),
      model("acme/family-latest", "Acme Family (latest)", 1_740_000_000, 64_000),
      model("zeta/open", "Zeta Open", 1_600_000_000, 16_000),
      model("other/alone", "Other Alone", 1_650_000_000, 1_000_000),
    ],
    endpoints: [
      endpoint("alpha", "acme/one", 1, 2, 0.5, [1.25, 2]),
      endpoint("beta", "acme/one", 1, 2),
      endpoint("gamma", "acme/one", 0.5, 1),
      endpoint("alpha", "acme/two", 3, 3),
      endpoint("beta", "acme/three", 2, 2),
      endpoint("gamma", "acme/four", 1, 1),
      endpoint("alpha", "acme/five", 1, 1),
      { ...endpoint("alpha", "acme/five:free", 0, 0), id: "ep_alpha_five-free" },
      endpoint("gamma", "acme/family-latest", 1, 1),
      endpoint("local", "zeta/open", 0, 0),
      endpoint("gamma", "zeta/open", 0.2, 0.4),
      endpoint("beta", "other/alone", 4, 8),
    ],
  };
}

export type FixtureCatalog = ReturnType<typeof fixtureCatalog>;

/**
 * The fixture with data policies declared on acme/one: alpha (region us, ZDR), beta (region eu);
 * every other endpoint declares nothing.
 */
export function fixtureCatalogWithDataPolicies(): FixtureCatalog {
  const catalog = fixtureCatalog();
  for (const e of catalog.endpoints) {
    if (e.id === "ep_alpha_one") Object.assign(e, { deployment_region: "US", zdr: true });
    if (e.id === "ep_beta_one") Object.assign(e, { deployment_region: "eu" });
  }
  return catalog;
}
