import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The catalog routing ships, for tests that start it from a file of their own. */
export const BUNDLED_CATALOG_FILE = join(__dirname, "..", "..", "..", "services", "routing", "catalog", "catalog.json");

interface CatalogEndpoint {
  model: string;
  provider: string;
  pricing: { prompt: number; completion: number; cached_prompt?: number | null };
}

/**
 * Writes a copy of the bundled catalog in which each listed model's endpoints are priced by their
 * place in `order` (first cheapest), so routing under the price sort (a request's `provider.sort`
 * or the account's `default_sort`; its default is a weighted draw) asks the providers in the order
 * the test states rather than in the order today's list prices happen to give. A
 * listed provider that has no endpoint for the model fails loudly. Answers the file's path.
 */
export function writeOrderedCatalog(order: Record<string, string[]>): string {
  const catalog = JSON.parse(readFileSync(BUNDLED_CATALOG_FILE, "utf8")) as { endpoints: CatalogEndpoint[] };
  for (const [model, providers] of Object.entries(order)) {
    providers.forEach((provider, rank) => {
      const endpoint = catalog.endpoints.find((e) => e.model === model && e.provider === provider);
      if (!endpoint) throw new Error(`the bundled catalog has no ${provider} endpoint for ${model}`);
      // Whole dollars per million tokens, far apart, so no other rule of the ranking reorders them.
      endpoint.pricing = { prompt: rank + 1, completion: rank + 1, cached_prompt: null };
    });
  }
  const file = join(mkdtempSync(join(tmpdir(), "catalog-")), "catalog.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}
