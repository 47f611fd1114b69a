import { routing } from "@router/proto";
import { plan } from "../src/plan/plan";
import { memoryCatalog } from "./memory-catalog";

const M = "acme/chat";
// Four providers of one model; prices in USD per million (prompt, completion).
const catalog = memoryCatalog([
  { model: M, provider: "alpha", prompt: 1, completion: 2, quantization: "fp16", supportedParameters: ["max_tokens", "tools"], zdr: true, noTraining: true },
  { model: M, provider: "beta", prompt: 2, completion: 4, quantization: "fp8", supportedParameters: ["max_tokens"], noTraining: true },
  { model: M, provider: "gamma", prompt: 3, completion: 1, quantization: null, supportedParameters: ["max_tokens", "tools"] },
  { model: M, provider: "delta", prompt: 0.5, completion: 8, quantization: "int4", supportedParameters: [] },
]);
const ALL = ["alpha", "beta", "gamma", "delta"];
const usd = (n: number) => BigInt(Math.round(n * 1e9));

function run(provider: Partial<routing.ProviderPreferences>, over: Partial<routing.PlanRequest> = {}): routing.PlanResponse {
  const req = routing.PlanRequest.fromPartial({ model: M, byokProviders: ALL, ...over, provider: { sort: "price", ...provider } });
  return plan(req, { catalog, seed: "s" });
}
const served = (res: routing.PlanResponse) => res.cascade.map((c) => c.providerSlug);
const refusedBy = (res: routing.PlanResponse) => Object.fromEntries(res.refused.map((r) => [r.providerSlug, r.constraint]));

describe("provider preferences as Plan filter stages", () => {
  it.each<[string, Partial<routing.ProviderPreferences>, Partial<routing.PlanRequest>, string[], Record<string, string>]>([
    ["nothing set keeps every endpoint (price order: prompt plus completion)", {}, {}, ["alpha", "gamma", "beta", "delta"], {}],
    ["only", { only: ["beta", "gamma"] }, {}, ["gamma", "beta"], { alpha: "provider.only", delta: "provider.only" }],
    ["ignore", { ignore: ["alpha"] }, {}, ["gamma", "beta", "delta"], { alpha: "provider.ignore" }],
    ["order without allow_fallbacks keeps the rest after", { order: ["gamma", "beta"] }, {}, ["gamma", "beta", "alpha", "delta"], {}],
    ["order with allow_fallbacks: false keeps only the listed", { order: ["gamma", "beta"], allowFallbacks: false }, {}, ["gamma", "beta"], { alpha: "provider.order", delta: "provider.order" }],
    [
      "require_parameters with tools (an empty list is unknown and passes)",
      { requireParameters: true },
      { requiredParameters: ["tools"] },
      ["alpha", "gamma", "delta"],
      { beta: "provider.require_parameters" },
    ],
    ["require_parameters without tools asks for nothing", { requireParameters: true }, {}, ["alpha", "gamma", "beta", "delta"], {}],
    ["tools without require_parameters is not a Plan filter", {}, { requiredParameters: ["tools"] }, ["alpha", "gamma", "beta", "delta"], {}],
    ["data_collection deny keeps endpoints declaring no training", { dataCollection: "deny" }, {}, ["alpha", "beta"], { gamma: "provider.data_collection", delta: "provider.data_collection" }],
    ["data_collection allow filters nothing", { dataCollection: "allow" }, {}, ["alpha", "gamma", "beta", "delta"], {}],
    ["zdr", { zdr: true }, {}, ["alpha"], { beta: "provider.zdr", gamma: "provider.zdr", delta: "provider.zdr" }],
    ["quantizations (undeclared matches none)", { quantizations: ["fp8", "INT4"] }, {}, ["beta", "delta"], { alpha: "provider.quantizations", gamma: "provider.quantizations" }],
    ["max_price.prompt is inclusive", { maxPricePromptPerMillion: usd(2) }, {}, ["alpha", "beta", "delta"], { gamma: "provider.max_price.prompt" }],
    ["max_price.completion", { maxPriceCompletionPerMillion: usd(2) }, {}, ["alpha", "gamma"], { beta: "provider.max_price.completion", delta: "provider.max_price.completion" }],
    [
      "the first constraint in stage order is the one recorded",
      { only: ["alpha", "beta", "gamma"], zdr: true, maxPricePromptPerMillion: usd(2.5) },
      {},
      ["alpha"],
      { beta: "provider.zdr", gamma: "provider.zdr", delta: "provider.only" },
    ],
    ["credentials come before preferences", { only: ["beta"] }, { byokProviders: ["alpha", "beta"] }, ["beta"], { alpha: "provider.only", gamma: "byok_credential", delta: "byok_credential" }],
  ])("%s", (_name, provider, over, cascade, refused) => {
    const res = run(provider, over);
    expect(res.refusal).toBeUndefined();
    expect(served(res)).toEqual(cascade);
    expect(refusedBy(res)).toEqual(refused);
  });

  it("refuses with 404 no_route naming every constraint that removed an endpoint when nothing is left", () => {
    const res = run({ only: ["beta", "gamma", "delta"], zdr: true, quantizations: ["fp16"] });
    expect(res.cascade).toEqual([]);
    expect(res.refusal).toMatchObject({ httpStatus: 404, code: "no_route", unsatisfiedFilters: ["provider.only", "provider.zdr"] });
    expect(res.refusal?.message).toContain("provider.only, provider.zdr");
  });

  it("order applies after a sort and before a sticky hoist would", () => {
    const res = run({ order: ["delta", "nobody", "alpha"], sort: "price" });
    expect(served(res)).toEqual(["delta", "alpha", "gamma", "beta"]);
    expect(res.ordering).toBe("deterministic");
  });
});
