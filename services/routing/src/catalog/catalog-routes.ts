import { Router, type Request, type RequestHandler } from "express";
import { DomainError } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { routing } from "@router/management-api";
import { z } from "zod";
import type { HealthCache } from "../health/health-cache";
import type { CatalogCache } from "./catalog-cache";
import { priceKey, type CatalogSnapshot } from "./catalog-snapshot";
import type { Model, Provider } from "./catalog-store";
import { anthropicModelJson, authorOf, modelJson } from "./model-json";
import { priceJson, type PriceJson } from "./price-json";

const count = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const ListModelsQuery = routing.listModelsQuery;

type Sort = (a: Model, b: Model, catalog: CatalogSnapshot) => number;

/** Sent by Anthropic's SDKs on every call: such a caller is answered in Anthropic's Models API shape. */
const ANTHROPIC_VERSION = "anthropic-version";

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
    if (req.header(ANTHROPIC_VERSION)) return void res.json(anthropicModelList(cache.snapshot(), req));
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
    res.json({ object: "list", data: page.map((m) => ({ ...modelJson(m), pricing: pricingOf(catalog, m) })), total: rows.length });
  });

  const endpointsOfModel: RequestHandler = (req, res, next) => {
    const catalog = cache.snapshot();
    // `/v1/models/a/endpoints` is model `a`'s endpoints unless `a` names nothing and `a/endpoints` is a model.
    const { id } = req.params;
    if (typeof id === "string" && !catalog.modelNamed(id) && catalog.model(`${id}/endpoints`)) return next();
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
  };

  // An encoded id or an alias before `:author/:slug`, which would read `gpt-4o-mini/endpoints` as a model.
  router.get("/v1/models/:id/endpoints", endpointsOfModel);
  // One model by its id written with a plain slash (`/v1/models/openai/gpt-4o-mini`), with an encoded
  // one (`openai%2Fgpt-4o-mini`, what the SDKs send) or by an alias (`gpt-4o-mini`): the Model object
  // itself, as the SDKs' `models.retrieve` expects, in Anthropic's shape for an Anthropic client.
  router.get(["/v1/models/:author/:slug", "/v1/models/:id"], (req, res) => {
    const model = requireModel(cache.snapshot(), req);
    res.json(req.header(ANTHROPIC_VERSION) ? anthropicModelJson(model) : modelJson(model));
  });

  router.get("/v1/models/:author/:slug/endpoints", endpointsOfModel);

  router.get("/v1/providers", (_req, res) => {
    res.json({ data: cache.snapshot().providers.map(providerJson) });
  });

  return router;
}

function requireModel(catalog: CatalogSnapshot, req: Request): Model {
  const { id: named, author, slug } = req.params;
  const id = typeof named === "string" ? named : `${String(author)}/${String(slug)}`;
  const model = catalog.modelNamed(id);
  if (!model) throw new DomainError("not_found", `model ${id} not found`, { details: { model: id } });
  return model;
}

const AnthropicListQuery = z.object({
  limit: count(1, 1000).default(20),
  after_id: z.string().max(256).optional(),
  before_id: z.string().max(256).optional(),
});

/** Anthropic's model list: newest first, paged by `after_id` / `before_id`, with `has_more`, `first_id`, `last_id`. */
function anthropicModelList(catalog: CatalogSnapshot, req: Request) {
  const query = parseInput(AnthropicListQuery, req.query, "");
  const rows = [...catalog.models].sort((a, b) => SORTS.created!(a, b, catalog));
  const at = (id: string, field: string): number => {
    const i = rows.findIndex((m) => m.id === id);
    if (i < 0) throw new DomainError("invalid_request", `${field}: no model ${id}`, { details: { field } });
    return i;
  };
  let start = query.after_id === undefined ? 0 : at(query.after_id, "after_id") + 1;
  let end = start + query.limit;
  if (query.before_id !== undefined && query.after_id === undefined) {
    end = at(query.before_id, "before_id");
    start = Math.max(0, end - query.limit);
  }
  const page = rows.slice(start, end).map(anthropicModelJson);
  const hasMore = query.before_id !== undefined && query.after_id === undefined ? start > 0 : end < rows.length;
  return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}

function pricingOf(catalog: CatalogSnapshot, m: Model): PriceJson | null {
  const price = catalog.listPrice(m.id);
  return price ? priceJson(price) : null;
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
