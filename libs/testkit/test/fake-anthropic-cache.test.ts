import { startFakeAnthropic, type FakeUpstream } from "../src";

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeAnthropic();
});

afterAll(async () => {
  await fake.close();
});

const system = (ttl?: "1h") => [
  { type: "text", text: "You are a careful assistant. ".repeat(40), cache_control: ttl ? { type: "ephemeral", ttl } : { type: "ephemeral" } },
];

async function send(body: Record<string, unknown>, key = "sk-ant-a"): Promise<Record<string, unknown>> {
  const res = await fetch(`${fake.url}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "claude-sonnet-4-5-20250929", max_tokens: 50, ...body }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { usage: Record<string, unknown> }).usage;
}

describe("the Anthropic fake's prompt cache", () => {
  it("writes the prefix up to the last marker the first time and reads it the next, input_tokens excluding both", async () => {
    const messages = [{ role: "user", content: "Hello" }];
    const first = await send({ system: system(), messages });
    const written = first.cache_creation_input_tokens as number;
    expect(written).toBeGreaterThan(250);
    expect(first).toMatchObject({ cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 } });

    const second = await send({ system: system(), messages });
    expect(second).toMatchObject({ cache_read_input_tokens: written, cache_creation_input_tokens: 0 });
    expect(second.input_tokens).toBe((first.input_tokens as number));

    // Another organisation's key has its own cache.
    expect(await send({ system: system(), messages }, "sk-ant-b")).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: written });
  });

  it("reads the longest prefix seen and writes the rest up to the last marker, for an hour when it says ttl 1h", async () => {
    const tools = [{ name: "lookup", description: "Looks a word up. ".repeat(30), input_schema: { type: "object" }, cache_control: { type: "ephemeral", ttl: "1h" } }];
    const first = await send({ tools, messages: [{ role: "user", content: "One" }] });
    expect(first).toMatchObject({ cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0 } });
    const toolTokens = first.cache_creation_input_tokens as number;

    const turn = [{ role: "user", content: [{ type: "text", text: "Two ".repeat(100), cache_control: { type: "ephemeral", ttl: "1h" } }] }];
    const second = await send({ tools, messages: turn });
    expect(second.cache_read_input_tokens).toBe(toolTokens);
    expect(second.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: second.cache_creation_input_tokens });
    expect(second.cache_creation_input_tokens).toBeGreaterThan(90);
  });

  it("reports scripted cache counts as they are, whatever the markers", async () => {
    fake.script({ usage: { prompt: 1000, completion: 3, cached: 100, cacheWrite5m: 200, cacheWrite1h: 300 } });
    expect(await send({ system: system(), messages: [{ role: "user", content: "Hi" }] })).toEqual({
      input_tokens: 400,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 500,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 300 },
      output_tokens: 3,
    });
  });
});
