import { SORTS } from "@router/request-settings";
import { priceKey, type RankedEndpoint } from "../catalog/catalog-snapshot";
import type { HealthSnapshot } from "../health/health-snapshot";
import { weightedOrder } from "./seeded-draw";

export type Sort = (typeof SORTS)[number];

export function isSort(value: string | null | undefined): value is Sort {
  return (SORTS as readonly string[]).includes(value ?? "");
}

/**
 * Prices below this (USD per million, prompt plus completion) weigh as this much, so a free or
 * self-hosted endpoint is strongly preferred without an infinite weight.
 */
export const PRICE_FLOOR_USD = 0.01;
/** The least share of its weight a failing endpoint keeps, so the draw still orders failing ones. */
export const MIN_HEALTH_FACTOR = 0.01;

const NANOS_PER_USD = 1e9;

/**
 * An endpoint's weight in the default draw: the inverse square of its price (prompt plus completion
 * per million tokens), times the share of recent attempts that did not fail.
 */
export function drawWeight(r: RankedEndpoint, health: HealthSnapshot): number {
  const usd = Math.max(Number(priceKey(r.endpoint.price)) / NANOS_PER_USD, PRICE_FLOOR_USD);
  const healthy = Math.max(1 - health.recentFailureRate(r.endpoint.id), MIN_HEALTH_FACTOR);
  return healthy / (usd * usd);
}

/**
 * Orders one model's endpoints (given cheapest first, then by provider slug, as the catalog keeps
 * them): by the sort when there is one, else by the weighted draw; then endpoints failing recently
 * go after the healthy ones, both groups keeping their order (a demotion, never a removal).
 * Unmeasured endpoints go after measured ones in the throughput and latency sorts; ties keep the
 * price order, so every sort is deterministic.
 */
export function rankEndpoints(
  endpoints: readonly RankedEndpoint[],
  sort: Sort | null,
  health: HealthSnapshot,
  random: () => number,
): RankedEndpoint[] {
  let ordered: RankedEndpoint[];
  if (endpoints.length < 2 || sort === "price") ordered = [...endpoints];
  else if (sort === "throughput") ordered = byMeasure(endpoints, (r) => health.of(r.endpoint.id).throughput, "desc");
  else if (sort === "latency") ordered = byMeasure(endpoints, (r) => health.of(r.endpoint.id).latencyMs, "asc");
  else ordered = weightedOrder(endpoints, (r) => drawWeight(r, health), random);
  return healthyFirst(ordered, health);
}

function byMeasure(
  endpoints: readonly RankedEndpoint[],
  measure: (r: RankedEndpoint) => number | null,
  direction: "asc" | "desc",
): RankedEndpoint[] {
  const keyed = endpoints.map((r, i) => ({ r, i, m: measure(r) }));
  keyed.sort((a, b) => {
    if (a.m === null || b.m === null) return a.m === b.m ? a.i - b.i : a.m === null ? 1 : -1;
    if (a.m !== b.m) return direction === "asc" ? a.m - b.m : b.m - a.m;
    return a.i - b.i;
  });
  return keyed.map((k) => k.r);
}

// A stable partition keeps the order inside both groups.
function healthyFirst(endpoints: RankedEndpoint[], health: HealthSnapshot): RankedEndpoint[] {
  if (!health.anyDegraded) return endpoints;
  const healthy: RankedEndpoint[] = [];
  const degraded: RankedEndpoint[] = [];
  for (const r of endpoints) (health.isDegraded(r.endpoint.id) ? degraded : healthy).push(r);
  return degraded.length === 0 ? endpoints : healthy.concat(degraded);
}
