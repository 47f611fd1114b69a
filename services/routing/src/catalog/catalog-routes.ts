import { Router, type Request } from "express";
import { DomainError } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { z } from "zod";
import type { HealthCache } from "../health/health-cache";
import type { CatalogCache } from "./catalog-cache";
import { priceKey, type CatalogSnapshot } from "./catalog-snapshot";
import type { Model, Provider } from "./catalog-store";
import { priceJson, type PriceJson } from "./price-json";

const count = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const ListModelsQuery = z.object({
  limit: count(1, 500).default(100),
  offset: count(0, 1_000_000_000).default(0),
  q: z.string().max(200).optional(),
  model_authors: z.string().max(2000).optional(),
  context: count(0, 1_000_000_000).optional(),
  // Any value is accepted; one that is not recognised sorts by id.
  sort: z.string().max(64).optional(),
});

type Sort = (a: Model, b: Model, catalog: CatalogSnapshot) => number;

const byId = (a: Model, b: Model) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

// Newest, longest-context and cheapest first: what someone sorting by those columns looks for.
const SORTS: Record<string, Sort> = {
  id: byId,
  name: (a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase(), "en") || byId(a, b),
  created: (a, b) => (b.created ?? -1) - (a.created ?? -1) || byId(a, b),
  context_length: (a, b) => (b.contextLength ?? -1) - (a.contextLength ?? -1) || byId(a, b),
  price: (a, b, catalog) => {
    const pa = catalog.listPrice(a.id);
    const pb = catalog.listPrice(b.id);
    const ka = pa ? priceKey(pa) : -1n;
    const kb = pb ? priceKey(pb) : -1n;
    return ka === kb ? byId(a, b) : ka < kb ? -1 : 1;
  },
};

/** The public catalog routes: models, a model, its endpoints, providers. Served from the caches. */
export function catalogRoutes(cache: CatalogCache, health: HealthCache): Router {
  const router = Router();

  router.get("/v1/models", (req, res) => {
    const query = parseInput(ListModelsQuery, req.query, "");
    const catalog = cache.snapshot();
    const needle = query.q?.trim().toLowerCase();
    const authors = query.model_authors
      ?.split(",")
      .map((a) => a.trim().toLowerCase())
      .filter(Boolean);
    const rows = catalog.models.filter(
      (m) =>
        (!needle || m.id.toLowerCase().includes(needle) || m.name.toLowerCase().includes(needle)) &&
        (!authors?.length || authors.includes(authorOf(m.id))) &&
        (query.context === undefined || (m.contextLength ?? 0) >= query.context),
    );
    const sort = SORTS[query.sort ?? "id"] ?? byId;
    rows.sort((a, b) => sort(a, b, catalog));
    const page = rows.slice(query.offset, query.offset + query.limit);
    res.json({ data: page.map((m) => ({ ...modelJson(m), pricing: pricingOf(catalog, m) })), total: rows.length });
  });

  router.get("/v1/models/:author/:slug", (req, res) => {
    res.json({ data: modelJson(requireModel(cache.snapshot(), req)) });
  });

  router.get("/v1/models/:author/:slug/endpoints", (req, res) => {
    const catalog = cache.snapshot();
    const model = requireModel(catalog, req);
    const measured = health.snapshot();
    res.json({
      data: catalog.endpointsOf(model.id).map(({ endpoint, provider }) => ({
        endpoint_id: endpoint.id,
        model_id: endpoint.modelId,
        provider: provider.slug,
        provider_name: provider.name,
        upstream_model: endpoint.upstreamModel,
        context_length: endpoint.contextLength,
        max_output_tokens: endpoint.maxOutputTokens,
        quantization: endpoint.quantization,
        supported_parameters: endpoint.supportedParameters,
        pricing: priceJson(endpoint.price),
        // Measured from the gateway's attempts over the last 24 h (see src/health).
        uptime: measured.of(endpoint.id).uptime,
        latency_ms: measured.of(endpoint.id).latencyMs,
        tool_call_reliability: measured.of(endpoint.id).toolCallReliability,
      })),
    });
  });

  router.get("/v1/providers", (_req, res) => {
    res.json({ data: cache.snapshot().providers.map(providerJson) });
  });

  return router;
}

function authorOf(id: string): string {
  return id.slice(0, id.indexOf("/"));
}

function requireModel(catalog: CatalogSnapshot, req: Request): Model {
  const id = `${String(req.params.author)}/${String(req.params.slug)}`;
  const model = catalog.model(id);
  if (!model) throw new DomainError("not_found", `model ${id} not found`, { details: { model: id } });
  return model;
}

function pricingOf(catalog: CatalogSnapshot, m: Model): PriceJson | null {
  const price = catalog.listPrice(m.id);
  return price ? priceJson(price) : null;
}

function modelJson(m: Model) {
  return {
    id: m.id,
    canonical_slug: m.canonicalSlug,
    name: m.name,
    created: m.created,
    description: m.description,
    context_length: m.contextLength,
    architecture: m.architecture,
    supported_parameters: m.supportedParameters,
    default_parameters: m.defaultParameters,
    resale_permitted: m.resalePermitted,
    byok_only: m.byokOnly,
    is_free: m.isFree,
    deprecation_date: m.deprecationDate,
  };
}

function providerJson(p: Provider) {
  return {
    slug: p.slug,
    name: p.name,
    hq_country: p.hqCountry,
    datacenters: p.datacenters,
    privacy_policy_url: p.privacyPolicyUrl,
    tos_url: p.tosUrl,
    status_page_url: p.statusPageUrl,
  };
}
