import { costOfTokens, fromUsd } from "@router/money";
import { ledger, routing } from "@router/proto";
import type { CallerKey } from "../../src/auth/caller";
import { keyCeilings } from "../../src/spend/key-ceilings";
import { parseChatRequest } from "@router/chat-request";
import { completionTokenBound, promptTokenBound, worstCaseCost } from "../../src/spend/worst-case";
import { usageLines, totalCost } from "../../src/spend/usage-cost";
import { callerKey } from "./caller-key";

const candidate = (o: Partial<routing.Candidate>): routing.Candidate =>
  routing.Candidate.fromPartial({
    modelId: "a/b",
    providerSlug: "openai",
    endpointId: "ep_x",
    apiFamily: "openai",
    maxOutputTokens: 4096,
    contextLength: 128_000,
    price: { promptPerMillion: fromUsd(1), completionPerMillion: fromUsd(2), cachedPromptPerMillion: 0n, cacheWrite5mPerMillion: 0n, cacheWrite1hPerMillion: 0n, priceVersionId: 3n },
    ...o,
  });

describe("worst case of a hold", () => {
  const req = parseChatRequest({ model: "a/b", messages: [{ role: "user", content: "héllo wörld" }] });

  it("bounds prompt tokens by the UTF-8 bytes of messages and tools", () => {
    const bytes = Buffer.byteLength(JSON.stringify(req.messages), "utf8");
    expect(promptTokenBound(req)).toBe(bytes);
    const withTools = parseChatRequest({ ...req, tools: [{ type: "function", function: { name: "f" } }] });
    expect(promptTokenBound(withTools)).toBe(bytes + Buffer.byteLength(JSON.stringify(withTools.tools)));
  });

  it("bounds completion tokens by max_tokens, else max output, else context length", () => {
    expect(completionTokenBound(parseChatRequest({ ...req, max_tokens: 50 }), candidate({}))).toBe(50);
    expect(completionTokenBound(parseChatRequest({ ...req, max_completion_tokens: 70 }), candidate({}))).toBe(70);
    expect(completionTokenBound(req, candidate({}))).toBe(4096);
    expect(completionTokenBound(req, candidate({ maxOutputTokens: 0 }))).toBe(128_000);
  });

  it("adds the thinking budget a provider may add on top of max_tokens", () => {
    expect(completionTokenBound(parseChatRequest({ ...req, max_tokens: 500, reasoning: { effort: "low" } }), candidate({}))).toBe(1524);
    expect(completionTokenBound(parseChatRequest({ ...req, max_tokens: 500, reasoning: { max_tokens: 3000 } }), candidate({}))).toBe(3500);
  });

  it("prices the bound at the most expensive endpoint of the cascade", () => {
    const cheap = candidate({ endpointId: "ep_cheap" });
    const dear = candidate({
      endpointId: "ep_dear",
      maxOutputTokens: 1000,
      price: { promptPerMillion: fromUsd(3), completionPerMillion: fromUsd(15), cachedPromptPerMillion: 0n, cacheWrite5mPerMillion: 0n, cacheWrite1hPerMillion: 0n, priceVersionId: 1n },
    });
    const prompt = promptTokenBound(req);
    const cheapCost = costOfTokens(prompt, fromUsd(1)) + costOfTokens(4096, fromUsd(2));
    const dearCost = costOfTokens(prompt, fromUsd(3)) + costOfTokens(1000, fromUsd(15));
    expect(worstCaseCost(req, [cheap, dear])).toBe(dearCost > cheapCost ? dearCost : cheapCost);
    expect(worstCaseCost(req, [])).toBe(0n);
  });

  it("prices every prompt token at the dearest prompt-side price, so a prompt written to the cache stays under the hold", () => {
    const anthropic = (write1h: bigint) =>
      candidate({
        maxOutputTokens: 100,
        price: { promptPerMillion: fromUsd(3), completionPerMillion: fromUsd(15), cachedPromptPerMillion: fromUsd(0.3), cacheWrite5mPerMillion: fromUsd(3.75), cacheWrite1hPerMillion: write1h, priceVersionId: 1n },
      });
    const prompt = promptTokenBound(req);
    expect(worstCaseCost(req, [anthropic(fromUsd(6))])).toBe(costOfTokens(prompt, fromUsd(6)) + costOfTokens(100, fromUsd(15)));
    // An unlisted 1-hour price is the prompt price, so the 5-minute write is the dearest.
    expect(worstCaseCost(req, [anthropic(0n)])).toBe(costOfTokens(prompt, fromUsd(3.75)) + costOfTokens(100, fromUsd(15)));
    // The bound holds for the most expensive split the provider could report: every prompt token a 1-hour write.
    const billed = totalCost(usageLines({ prompt, completion: 100, cached: 0, reasoning: 0, cacheWrite1h: prompt }, anthropic(fromUsd(6))));
    expect(billed).toBeLessThanOrEqual(worstCaseCost(req, [anthropic(fromUsd(6))]));
  });
});

describe("usage lines", () => {
  it("prices cached prompt tokens at the cached price (or the prompt price when none) and rounds each line up", () => {
    const lines = usageLines({ prompt: 10, completion: 3, cached: 4, reasoning: 0 }, candidate({
      price: { promptPerMillion: 1_000_001n, completionPerMillion: 7n, cachedPromptPerMillion: 0n, cacheWrite5mPerMillion: 0n, cacheWrite1hPerMillion: 0n, priceVersionId: 9n },
    }));
    expect(lines.map((l) => [l.kind, l.tokens, l.cost])).toEqual([
      ["prompt", 6, 7n],
      ["cached_prompt", 4, 5n],
      ["completion", 3, 1n],
    ]);
    expect(totalCost(lines)).toBe(13n);
    expect(lines.every((l) => l.priceVersionId === 9n)).toBe(true);
  });

  const sonnet = candidate({
    price: { promptPerMillion: fromUsd(3), completionPerMillion: fromUsd(15), cachedPromptPerMillion: fromUsd(0.3), cacheWrite5mPerMillion: fromUsd(3.75), cacheWrite1hPerMillion: fromUsd(6), priceVersionId: 4n },
  });

  it("prices 5-minute and 1-hour cache writes at their own prices beside reads, uncached prompt and completion", () => {
    const lines = usageLines({ prompt: 10_000, completion: 200, cached: 6_000, reasoning: 0, cacheWrite5m: 2_500, cacheWrite1h: 1_000 }, sonnet);
    expect(lines.map((l) => [l.kind, l.tokens, l.pricePerMillion, l.cost])).toEqual([
      ["prompt", 500, 3_000_000_000n, 1_500_000n],
      ["cached_prompt", 6_000, 300_000_000n, 1_800_000n],
      ["cache_write_5m", 2_500, 3_750_000_000n, 9_375_000n],
      ["cache_write_1h", 1_000, 6_000_000_000n, 6_000_000n],
      ["completion", 200, 15_000_000_000n, 3_000_000n],
    ]);
    expect(totalCost(lines)).toBe(21_675_000n);
  });

  it("prices a write as prompt where the catalog lists no write price", () => {
    const lines = usageLines({ prompt: 100, completion: 0, cached: 0, reasoning: 0, cacheWrite5m: 60, cacheWrite1h: 40 }, candidate({}));
    expect(lines.map((l) => [l.kind, l.tokens, l.pricePerMillion])).toEqual([
      ["prompt", 0, fromUsd(1)],
      ["cache_write_5m", 60, fromUsd(1)],
      ["cache_write_1h", 40, fromUsd(1)],
      ["completion", 0, fromUsd(2)],
    ]);
  });

  it("never bills more prompt tokens than the provider counted when its parts overrun the total", () => {
    const lines = usageLines({ prompt: 100, completion: 0, cached: 70, reasoning: 0, cacheWrite5m: 50, cacheWrite1h: 20 }, sonnet);
    expect(lines.map((l) => [l.kind, l.tokens])).toEqual([
      ["prompt", 0],
      ["cached_prompt", 70],
      ["cache_write_5m", 10],
      ["cache_write_1h", 20],
      ["completion", 0],
    ]);
  });
});

describe("key ceilings", () => {
  const key = (o: Partial<CallerKey>): CallerKey => callerKey({ workspaceId: null, workspaceName: null, ...o });

  it("sends nothing for a key without a limit", () => {
    expect(keyCeilings(key({}))).toEqual([]);
  });

  it("sends the key's limit, window, mode, BYOK flag and name, lifetime when no reset", () => {
    expect(keyCeilings(key({ limitNanos: 5n, limitReset: "weekly", limitMode: "soft", includeByokInLimit: true, name: "Prod" }))).toEqual([
      {
        subjectKind: "key",
        subjectId: "h1",
        limitNanodollars: 5n,
        window: ledger.Window.WINDOW_WEEKLY,
        mode: ledger.LimitMode.LIMIT_MODE_SOFT,
        includeByok: true,
        subjectName: "Prod",
      },
    ]);
    expect(keyCeilings(key({ limitNanos: 5n }))[0]).toMatchObject({ window: ledger.Window.WINDOW_LIFETIME, mode: ledger.LimitMode.LIMIT_MODE_HARD });
  });
});
