import { readFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { costOfTokens, fromUsd, type Nanodollars } from "@router/money";
import { gatewayClient, startFakeAnthropic, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * Prompt caching priced end to end, through `@anthropic-ai/sdk` on `POST /v1/messages`: a turn that
 * writes the cache (5-minute and 1-hour writes) and one that reads it are reported back to the
 * client as Anthropic reports them, and billed at the catalog's prices: the usage lines of the
 * generation record, the activity detail and the key's usage (what the ledger settled) all agree to
 * the nanodollar.
 */

const MODEL = "anthropic/claude-sonnet-4.5";
const ENDPOINT = "ep_anthropic_claude-sonnet-4-5";

interface CatalogPricing {
  prompt: number;
  completion: number;
  cached_prompt: number;
  cache_write_5m: number;
  cache_write_1h: number;
}

// The bundled catalog's list prices for the endpoint that serves MODEL, in nanodollars per million.
const pricing = (() => {
  const file = JSON.parse(readFileSync(join(__dirname, "..", "services", "routing", "catalog", "catalog.json"), "utf8")) as {
    endpoints: { id: string; pricing: CatalogPricing }[];
  };
  const p = file.endpoints.find((e) => e.id === ENDPOINT)!.pricing;
  return {
    prompt: fromUsd(p.prompt),
    completion: fromUsd(p.completion),
    cached_prompt: fromUsd(p.cached_prompt),
    cache_write_5m: fromUsd(p.cache_write_5m),
    cache_write_1h: fromUsd(p.cache_write_1h),
  };
})();

type Kind = keyof typeof pricing;
const cost = (lines: [Kind, number][]): Nanodollars => lines.reduce((sum, [kind, tokens]) => sum + costOfTokens(tokens, pricing[kind]), 0n);

const system = [
  { type: "text" as const, text: "You are Router's test assistant. ".repeat(50), cache_control: { type: "ephemeral" as const, ttl: "1h" as const } },
  { type: "text" as const, text: "Answer briefly.", cache_control: { type: "ephemeral" as const } },
];

describe("prompt caching through the Anthropic SDK: reported to the client and billed at the catalog's cache prices", () => {
  let stack: Stack;
  let fake: FakeUpstream;
  let anthropic: Anthropic;
  let inference: ReturnType<typeof gatewayClient>;
  let mgmt: ReturnType<typeof gatewayClient>;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    stack = await startStack({ providerBaseUrls: { anthropic: fake.url } });
    const org = await stack.createOrg("Cache Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "anthropic", api_key: "sk-ant-cache-0001" })).status).toBe(201);
    // A limit that counts BYOK spend makes the key's usage the ledger's settled spend.
    const created = await mgmt.post("/v1/keys", { name: "cache", limit: 100, limit_reset: "daily", include_byok_in_limit: true });
    expect(created.status).toBe(201);
    const key = created.json.data.key as string;
    inference = gatewayClient(stack.gatewayUrl, key);
    anthropic = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  const recorded = async (id: string) =>
    waitFor(
      async () => {
        const gen = await inference.get(`/v1/generation?id=${id}`);
        return gen.status === 200 ? (gen.json.data as Record<string, unknown>) : undefined;
      },
      { what: `the generation record of ${id}` },
    );

  const linesOf = (gen: Record<string, unknown>) =>
    (gen.usage_lines as { kind: string; tokens: number; cost_nanodollars: string; price_per_million_nanodollars: string }[]).map((l) => [
      l.kind,
      l.tokens,
      BigInt(l.price_per_million_nanodollars),
      BigInt(l.cost_nanodollars),
    ]);

  const writeTurn: [Kind, number][] = [["prompt", 40], ["cache_write_5m", 300], ["cache_write_1h", 2_000], ["completion", 25]];
  const readTurn: [Kind, number][] = [["prompt", 60], ["cached_prompt", 2_300], ["completion", 30]];

  it("reports a cache write as Anthropic does and bills each TTL at its own price", async () => {
    fake.script({ text: "Noted.", usage: { prompt: 2_340, completion: 25, cacheWrite5m: 300, cacheWrite1h: 2_000 } });
    const msg = await anthropic.messages.create({ model: MODEL, max_tokens: 100, system, messages: [{ role: "user", content: "Hello" }] });

    expect(msg.usage).toMatchObject({
      input_tokens: 40,
      cache_creation_input_tokens: 2_300,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 2_000 },
      output_tokens: 25,
    });

    const gen = await recorded(msg.id);
    expect(linesOf(gen)).toEqual(writeTurn.map(([kind, tokens]) => [kind, tokens, pricing[kind], cost([[kind, tokens]])]));
    expect(gen).toMatchObject({ tokens_prompt: 2_340, tokens_cached: 0, tokens_cache_write_5m: 300, tokens_cache_write_1h: 2_000, is_cache_hit: false });
    // A write costs more than the same tokens uncached.
    expect(cost(writeTurn)).toBeGreaterThan(cost([["prompt", 2_340], ["completion", 25]]));
  });

  it("reports a cache read on a stream and bills it at the cached price; the key's usage is both turns to the nanodollar", async () => {
    fake.script({ chunks: ["Still ", "here."], usage: { prompt: 2_360, completion: 30, cached: 2_300 } });
    const stream = anthropic.messages.stream({
      model: MODEL,
      max_tokens: 100,
      system,
      messages: [
        { role: "user", content: "Hello" },
        { role: "assistant", content: "Noted." },
        { role: "user", content: "Still there?" },
      ],
    });
    const msg = await stream.finalMessage();
    expect(msg.usage).toMatchObject({ input_tokens: 60, cache_read_input_tokens: 2_300, cache_creation_input_tokens: 0, output_tokens: 30 });

    const gen = await recorded(msg.id);
    expect(linesOf(gen)).toEqual(readTurn.map(([kind, tokens]) => [kind, tokens, pricing[kind], cost([[kind, tokens]])]));
    expect(gen).toMatchObject({ tokens_cached: 2_300, tokens_cache_write_5m: 0, tokens_cache_write_1h: 0, is_cache_hit: true });

    // The activity consumer writes the row from the event, after the answer: wait for it.
    const detail = await waitFor(
      async () => {
        const found = await mgmt.get(`/v1/activity/requests/${msg.id}`);
        return found.status === 200 ? found : undefined;
      },
      { what: `the activity row of ${msg.id}` },
    );
    expect(detail.json.data).toMatchObject({ is_cache_hit: true, cache_read_tokens: 2_300, cache_write_5m_tokens: 0, cache_write_1h_tokens: 0 });

    const spent = cost(writeTurn) + cost(readTurn);
    await waitFor(
      async () => {
        const k = await inference.get("/v1/key");
        return BigInt(Math.round(Number(k.json.data?.usage) * 1e9)) === spent ? true : undefined;
      },
      { what: `the key's usage to reach ${spent} nanodollars` },
    );
  });

  it("passes cache_control markers to Anthropic byte for byte, and bills the write and then the read that Anthropic reports for them", async () => {
    const marked = [{ type: "text" as const, text: `A fresh prefix ${Date.now()}. `.repeat(40), cache_control: { type: "ephemeral" as const, ttl: "1h" as const } }];
    const ask = () => anthropic.messages.create({ model: MODEL, max_tokens: 50, system: marked, messages: [{ role: "user", content: "Hi" }] });
    const first = await ask();
    const sent = fake.requests.at(-1)!.body as { system: unknown };
    expect(sent.system).toEqual(marked);
    const written = first.usage.cache_creation_input_tokens ?? 0;
    expect(written).toBeGreaterThan(0);
    expect(first.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: written } });

    const second = await ask();
    expect(second.usage).toMatchObject({ cache_read_input_tokens: written, cache_creation_input_tokens: 0 });

    const [one, two] = await Promise.all([recorded(first.id), recorded(second.id)]);
    expect(linesOf(one)).toContainEqual(["cache_write_1h", written, pricing.cache_write_1h, cost([["cache_write_1h", written]])]);
    expect(linesOf(two)).toContainEqual(["cached_prompt", written, pricing.cached_prompt, cost([["cached_prompt", written]])]);
  });
});
