import { performance } from "node:perf_hooks";
import { systemClock } from "@router/money";
import { routing } from "@router/proto";
import { applyPreset, CatalogSnapshot, HealthSnapshot, MemoryPinStore, plan, routingGuardrail, stickyKeyOf } from "@router/routing";

/**
 * Routing's `Plan` computation in process, for one model served by 50 endpoints (plus two fallback
 * models of 5): what one Plan call does after its inputs are in memory (the sticky key's hash, the
 * pins read from the in-memory store, the preset merge, filtering, ranking, the hoist and the
 * candidates). `make bench-plan`; BENCH_PLANS (default 20,000 per scenario). Prints p50/p90/p99
 * in microseconds per scenario; no network, no database.
 */
const PLANS = Number(process.env.BENCH_PLANS ?? 20_000);
const ENDPOINTS = 50;
const MODEL = "bench/wide";

function catalog(): CatalogSnapshot {
  const providers = Array.from({ length: ENDPOINTS }, (_, i) => `host-${String(i).padStart(2, "0")}`);
  const endpoint = (model: string, provider: string, i: number) => ({
    id: `ep_${provider}_${model.replace("/", "-")}`,
    modelId: model,
    providerSlug: provider,
    upstreamModel: model,
    contextLength: 128_000,
    maxOutputTokens: 8192,
    quantization: i % 3 === 0 ? "fp8" : null,
    supportedParameters: ["max_tokens", "temperature", "tools"],
    zdr: true,
    noTraining: true,
    deploymentRegion: "us",
    apiFamily: null,
    // Prices spread from $0.10 to about $5 per million, prompt plus completion.
    price: { promptPerMillion: BigInt(50_000_000 + i * 47_000_000), completionPerMillion: BigInt(50_000_000 + i * 53_000_000), cachedPromptPerMillion: null, cacheWrite5mPerMillion: null, cacheWrite1hPerMillion: null, priceVersionId: BigInt(i + 1) },
  });
  const model = (id: string) => ({
    id,
    canonicalSlug: id,
    name: id,
    created: null,
    description: null,
    contextLength: 128_000,
    architecture: null,
    supportedParameters: null,
    defaultParameters: null,
    resalePermitted: "unknown" as const,
    byokOnly: true,
    isFree: false,
    deprecationDate: null,
    aliases: [],
  });
  return new CatalogSnapshot({
    revision: 1n,
    providers: providers.map((slug) => ({ slug, name: slug, hqCountry: null, datacenters: null, privacyPolicyUrl: null, tosUrl: null, statusPageUrl: null, apiFamily: "openai", baseUrl: `https://${slug}.example/v1`, selfHosted: false })),
    models: [MODEL, "bench/second", "bench/third"].map(model),
    endpoints: [
      ...providers.map((p, i) => endpoint(MODEL, p, i)),
      ...providers.slice(0, 5).map((p, i) => endpoint("bench/second", p, i)),
      ...providers.slice(5, 10).map((p, i) => endpoint("bench/third", p, i)),
    ],
  });
}

// A third of the wide model's endpoints with recent failures and measured latency and throughput.
function health(snapshot: CatalogSnapshot): HealthSnapshot {
  return new HealthSnapshot(
    snapshot.endpointsOf(MODEL).map((r, i) => ({
      endpointId: r.endpoint.id,
      recentAttempts: 20,
      recentFailures: i % 3 === 0 ? (i % 2 === 0 ? 12 : 2) : 0,
      dayAttempts: 500,
      dayFailures: 10,
      dayTtftSumMs: 500 * (200 + i * 7),
      dayTtftCount: 500,
      dayOutputTokens: 100_000,
      dayGenerationMs: 1_000 * (1 + (i % 7)),
      dayToolCalls: 0,
      dayInvalidToolCalls: 0,
    })),
  );
}

const guardrailBase = {
  name: "bench",
  allowedModels: [],
  allowedProviders: [],
  allowedDataRegions: [],
  enforceZdr: {},
  budgetNanodollars: null,
  budgetReset: null,
  includeByokInBudgets: false,
  contentFilterBuiltins: [],
  contentFilters: [],
  filterAllowlist: [],
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

async function main(): Promise<void> {
  const snapshot = catalog();
  const healthSnapshot = health(snapshot);
  const byok = snapshot.providers.map((p) => p.slug);
  const pins = new MemoryPinStore(systemClock, { idleTtlMs: 3_600_000 });
  const base = routing.PlanRequest.fromPartial({ orgId: "org_bench", model: MODEL, models: ["bench/second", "bench/third"], byokProviders: byok });
  const pinnedKey = stickyKeyOf({ ...base, sessionId: "conversation" });
  await pins.record({ orgId: "org_bench", hash: pinnedKey?.hash ?? "", mode: "sticky", modelId: MODEL, endpointId: `ep_host-37_${MODEL.replace("/", "-")}`, atMs: 1 });
  const preset = { slug: "bench", version: 3, settings: { model: MODEL, models: ["bench/second", "bench/third"], temperature: 0.2, provider: { sort: "latency" as const } } };

  const preferences = routing.ProviderPreferences.fromPartial({
    order: ["host-07", "host-03", "host-41"],
    ignore: ["elsewhere"],
    requireParameters: true,
    dataCollection: "deny",
    zdr: true,
    maxPricePromptPerMillion: 10_000_000_000n,
    maxPriceCompletionPerMillion: 10_000_000_000n,
  });
  // A key's and a member's guardrail that every endpoint passes: allowlists, a region, ZDR.
  const guardrails = [
    routingGuardrail("gr_key", { ...guardrailBase, allowedProviders: byok, allowedModels: [MODEL, "bench/second", "bench/third"], enforceZdr: { bench: true } }),
    routingGuardrail("gr_member", { ...guardrailBase, allowedDataRegions: ["us"], allowedProviders: byok }),
  ];
  const privacy = { zdr: true, zdrGroups: ["bench"], denyTraining: true, regions: ["us"] };
  // The same, with the key's guardrail carrying every builtin detector and 20 patterns of its own,
  // and a spend budget (handed to the gateway for the ledger).
  const filtering = [
    routingGuardrail("gr_filters", {
      ...guardrailBase,
      allowedProviders: byok,
      budgetNanodollars: 5_000_000_000n,
      budgetReset: "monthly",
      includeByokInBudgets: true,
      contentFilterBuiltins: ["email", "phone", "credit_card", "ssn", "ip_address", "api_key"],
      contentFilters: Array.from({ length: 20 }, (_, i) => ({ name: `rule-${i}`, pattern: `(?i)codename-${i}\\b`, action: "block" as const })),
      filterAllowlist: ["support@example.com"],
    }),
    ...guardrails,
  ];
  const scenarios: Record<string, (i: number) => Promise<routing.PlanResponse>> = {
    "weighted draw (default)": async (i) => plan(base, { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}` }),
    "price sort": async (i) => plan({ ...base, provider: routing.ProviderPreferences.fromPartial({ sort: "price" }) }, { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}` }),
    "sticky session (pin read + hoist)": async (i) => {
      const req = { ...base, sessionId: "conversation" };
      const sticky = stickyKeyOf(req);
      const held = await pins.read(req.orgId, sticky?.hash ?? "");
      return plan(req, { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}`, sticky, pins: held });
    },
    // Every endpoint passes, so every stage runs for every endpoint (the costliest case).
    "preferences (7 stages + order)": async (i) =>
      plan({ ...base, requiredParameters: ["tools"], provider: preferences }, { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}` }),
    "preferences + 2 guardrails + privacy": async (i) =>
      plan({ ...base, requiredParameters: ["tools"], provider: preferences }, { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}`, guardrails, privacy }),
    "+ 20 content-filter patterns, budget": async (i) =>
      plan({ ...base, requiredParameters: ["tools"], provider: preferences }, { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}`, guardrails: filtering, privacy }),
    "preset merged (latency sort)": async (i) => plan(applyPreset({ ...base, model: "@preset/bench", models: [] }, preset), { catalog: snapshot, health: healthSnapshot, seed: `seed-${i}` }),
  };

  process.stdout.write(`Plan in process: ${ENDPOINTS} endpoints on the first model, 2 fallback models of 5; ${PLANS} plans per scenario\n`);
  for (const [name, run] of Object.entries(scenarios)) {
    const check = await run(0);
    if (check.cascade.length !== ENDPOINTS + 10) throw new Error(`${name}: expected ${ENDPOINTS + 10} candidates, got ${check.cascade.length}`);
    if (name.endsWith("budget") && check.guardrailBudgets.length !== 1) throw new Error(`${name}: expected the guardrail's budget in the plan`);
    for (let i = 0; i < 5_000; i += 1) await run(i); // warm the JIT
    const times: number[] = [];
    for (let i = 0; i < PLANS; i += 1) {
      const t0 = performance.now();
      await run(i);
      times.push((performance.now() - t0) * 1000);
    }
    times.sort((a, b) => a - b);
    const us = (p: number) => percentile(times, p).toFixed(1).padStart(7);
    process.stdout.write(`  ${name.padEnd(36)} p50 ${us(0.5)} µs   p90 ${us(0.9)} µs   p99 ${us(0.99)} µs   (${check.ordering})\n`);
  }
  pins.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
