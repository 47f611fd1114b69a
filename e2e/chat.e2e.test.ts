import {
  gatewayClient,
  startFakeAnthropic,
  startFakeGemini,
  startFakeOpenAi,
  startStack,
  waitFor,
  writeOrderedCatalog,
  type FakeUpstream,
  type Stack,
} from "@router/testkit";

/**
 * The walking skeleton, end to end: gateway, routing, ledger and activity as separate processes on
 * real Postgres, Redis and the Redis Streams bus; upstream providers are fakes speaking their wire
 * formats. A completion enters the gateway, is planned over gRPC, admitted by the ledger, served
 * with the organisation's own key, settled, and shows up in activity through the bus.
 */
describe("chat completions through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  let gemini: FakeUpstream;
  let groq: FakeUpstream;
  let together: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let inference: ReturnType<typeof gatewayClient>;
  let inferenceKey: string;

  beforeAll(async () => {
    [openai, anthropic, gemini, groq, together] = await Promise.all([
      startFakeOpenAi(),
      startFakeAnthropic(),
      startFakeGemini(),
      startFakeOpenAi(),
      startFakeOpenAi(),
    ]);
    stack = await startStack({
      providerBaseUrls: {
        openai: openai.url,
        anthropic: anthropic.url,
        google: gemini.url,
        groq: groq.url,
        together: together.url,
      },
      // The failover test asks groq first, then together.
      extraEnv: { ROUTING_CATALOG_FILE: writeOrderedCatalog({ "meta-llama/llama-3.3-70b-instruct": ["groq", "together"] }) },
    });
    const org = await stack.createOrg("Acme");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const [provider, key] of [
      ["openai", "sk-openai-acme-0001"],
      ["anthropic", "sk-ant-acme-0002"],
      ["google", "goog-acme-0003"],
      ["groq", "gsk-acme-0004"],
      ["together", "tg-acme-0005"],
    ]) {
      const res = await mgmt.post("/v1/provider-keys", { provider, api_key: key });
      expect(res.status).toBe(201);
    }
    // Routing's default ranking is a weighted draw; the price sort makes the ordered catalog's order the order tried.
    expect((await mgmt.put("/v1/routing/defaults", { default_sort: "price" })).status).toBe(200);
    const created = await mgmt.post("/v1/keys", { name: "app" });
    expect(created.status).toBe(201);
    inferenceKey = created.json.data.key as string;
    inference = gatewayClient(stack.gatewayUrl, inferenceKey);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([openai, anthropic, gemini, groq, together].map((f) => f?.close()));
  });

  afterEach(() => {
    // On failure, the services' own logs say what went wrong.
    const state = expect.getState();
    if (state.assertionCalls > 0 && stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  const activityRow = (id: string) =>
    waitFor(
      async () => {
        const res = await mgmt.get("/v1/activity?limit=50");
        return (res.json.data as Array<Record<string, unknown>> | undefined)?.find((r) => r.id === id);
      },
      { timeoutMs: 15_000, what: `activity row ${id}` },
    );

  it("serves a non-streaming completion with the organisation's own OpenAI key and records it in activity", async () => {
    openai.script({ text: "Hi there, Acme.", usage: { prompt: 9, completion: 4 } });
    const res = await inference.post("/v1/chat/completions", {
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "Say hi" }],
    });
    expect(res.status).toBe(200);
    expect(res.json.id).toMatch(/^gen-/);
    expect(res.json.model).toBe("openai/gpt-4o-mini");
    expect(res.json.choices[0].message.content).toBe("Hi there, Acme.");
    expect(res.json.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    const sent = openai.requests[openai.requests.length - 1];
    expect(sent?.headers.authorization).toBe("Bearer sk-openai-acme-0001");
    expect((sent?.body as { model: string }).model).toBe("gpt-4o-mini");

    const row = await activityRow(res.json.id as string);
    expect(row).toMatchObject({
      requested_model: "openai/gpt-4o-mini",
      served_model: "openai/gpt-4o-mini",
      provider_slug: "openai",
      status: "complete",
      finish_reason: "stop",
      is_byok: true,
      streamed: false,
      cancelled: false,
      total_cost: 0,
      fee: 0,
    });
    // What the provider charged at list price is shown, never rounded away to 0.
    expect(row?.list_cost).toBeGreaterThan(0);
  });

  it("streams a completion as SSE with usage on the final chunk and [DONE], and records it", async () => {
    openai.script({ chunks: ["One ", "two ", "three."], usage: { prompt: 5, completion: 3 } });
    const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Count" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const body = await res.text();
    const events = body.split("\n\n").filter((e) => e.startsWith("data: "));
    expect(events[events.length - 1]).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as Record<string, any>);
    const text = chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
    expect(text).toBe("One two three.");
    const last = chunks[chunks.length - 1];
    expect(last?.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    const id = chunks[0]?.id as string;
    expect(id).toMatch(/^gen-/);

    const row = await activityRow(id);
    expect(row).toMatchObject({ streamed: true, status: "complete", served_model: "openai/gpt-4o-mini" });
  });

  it("answers the generation record right after the response", async () => {
    const res = await inference.post("/v1/chat/completions", {
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "Hello" }],
    });
    expect(res.status).toBe(200);
    const gen = await inference.get(`/v1/generation?id=${res.json.id as string}`);
    expect(gen.status).toBe(200);
    expect(gen.json.data).toMatchObject({ id: res.json.id, model: "openai/gpt-4o-mini", is_byok: true, streamed: false });
  });

  it.each([
    ["anthropic/claude-3.5-haiku", () => anthropic, "x-api-key", "sk-ant-acme-0002"],
    ["google/gemini-2.5-flash", () => gemini, "x-goog-api-key", "goog-acme-0003"],
  ])("serves %s in its own wire format, streaming and not", async (model, fake, header, key) => {
    fake().script({ text: "Bonjour.", usage: { prompt: 7, completion: 2 } });
    const res = await inference.post("/v1/chat/completions", { model, messages: [{ role: "user", content: "Hi" }] });
    expect(res.status).toBe(200);
    expect(res.json.model).toBe(model);
    expect(res.json.choices[0].message.content).toBe("Bonjour.");
    expect(res.json.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2 });
    expect(fake().requests[fake().requests.length - 1]?.headers[header]).toBe(key);

    fake().script({ chunks: ["Bon", "jour."] });
    const streamed = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${inferenceKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const text = (await streamed.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => (JSON.parse(e.slice(6)) as Record<string, any>).choices?.[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe("Bonjour.");
  });

  it("fails over to the next endpoint when the first provider answers 503 before any byte, and records both attempts", async () => {
    groq.script({ failure: { kind: "status", status: 503, code: "overloaded" } });
    together.script({ text: "From together." });
    const res = await inference.post("/v1/chat/completions", {
      model: "meta-llama/llama-3.3-70b-instruct",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe("From together.");
    expect(res.json.provider).toBe("together");
    const id = res.json.id as string;
    await activityRow(id);
    const attempts = await waitFor(async () => {
      const r = await mgmt.get(`/v1/activity/upstream?request=${id}`);
      const rows = r.json.data as Array<Record<string, unknown>>;
      return rows?.length === 2 ? rows : undefined;
    });
    const byIndex = [...attempts].sort((a, b) => Number(a.attempt) - Number(b.attempt));
    expect(byIndex[0]).toMatchObject({ attempt: 1, provider_slug: "groq", status: "error", http_status: 503 });
    expect(byIndex[1]).toMatchObject({ attempt: 2, provider_slug: "together", status: "ok", http_status: 200 });
    expect(String(byIndex[0]?.error_message)).toContain("groq");
  });

  it("refuses a hard-limit key at its ceiling with 403 budget_exceeded before any provider is asked, and records the refusal", async () => {
    const created = await mgmt.post("/v1/keys", {
      name: "tight",
      limit: 0.000001,
      limit_reset: "daily",
      limit_mode: "hard",
      include_byok_in_limit: true,
    });
    const tight = gatewayClient(stack.gatewayUrl, created.json.data.key as string);
    openai.script({ text: "spend", usage: { prompt: 1000, completion: 1000 } });
    const first = await tight.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
    expect(first.status).toBe(200);
    // Settlement happens after the response; wait until the ledger counts it.
    await waitFor(async () => {
      const k = await tight.get("/v1/key");
      return Number(k.json.data?.usage) >= 0.000001 ? true : undefined;
    });
    const before = openai.requests.length;
    const refused = await tight.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("budget_exceeded");
    expect(openai.requests.length).toBe(before);
    await waitFor(async () => {
      const r = await mgmt.get("/v1/activity?status=refused");
      const rows = r.json.data as Array<Record<string, unknown>>;
      return rows?.find((row) => row.error_code === "budget_exceeded" && row.served_model === null);
    });
  });

  it("admits a hard-limit key's requests from a spend lease and ends up counting exactly what they cost", async () => {
    const created = await mgmt.post("/v1/keys", { name: "leased", limit: 10, limit_mode: "hard", include_byok_in_limit: true });
    const leased = gatewayClient(stack.gatewayUrl, created.json.data.key as string);
    const ids: string[] = [];
    for (const completion of [3, 5, 8]) {
      openai.script({ text: "leased", usage: { prompt: 40, completion } });
      const res = await leased.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
      expect(res.status).toBe(200);
      ids.push(res.json.id as string);
    }
    const costs = await Promise.all(
      ids.map((id) =>
        waitFor(async () => {
          const r = await mgmt.get(`/v1/activity/requests/${id}`);
          const lines = r.json.data?.usage_lines as Array<{ cost_nanodollars: string }> | undefined;
          return lines ? lines.reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n) : undefined;
        }),
      ),
    );
    const spent = costs.reduce((a, b) => a + b, 0n);
    expect(spent).toBeGreaterThan(0n);
    // The lease's unspent part goes back about a second after its last use; then usage is the spend.
    await waitFor(async () => {
      const k = await leased.get("/v1/key");
      return BigInt(Math.round(Number(k.json.data?.usage) * 1e9)) === spent ? true : undefined;
    }, { timeoutMs: 15_000 });
  });

  it("serves a soft-limit key past its ceiling with x-router-limit-warning", async () => {
    const created = await mgmt.post("/v1/keys", {
      name: "soft",
      limit: 0,
      limit_mode: "soft",
      include_byok_in_limit: true,
    });
    const soft = gatewayClient(stack.gatewayUrl, created.json.data.key as string);
    const res = await soft.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-limit-warning")).toMatch(/limit/);
  });

  it("tells an organisation with no provider credential to add one, and refuses management keys on chat", async () => {
    const other = await stack.createOrg("Empty Co");
    const otherMgmt = gatewayClient(stack.gatewayUrl, other.managementKey);
    const key = (await otherMgmt.post("/v1/keys", { name: "k" })).json.data.key as string;
    const res = await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", {
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "x" }],
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.json.error.message).toMatch(/provider key|credential/i);

    const asMgmt = await otherMgmt.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [] });
    expect(asMgmt.status).toBe(403);
    expect(asMgmt.json.error.code).toBe("permission_denied");

    // Another organisation's activity never shows Acme's requests.
    const rows = (await otherMgmt.get("/v1/activity")).json.data as unknown[];
    expect(rows.every((r) => (r as { requested_model: string }).requested_model === "openai/gpt-4o-mini")).toBe(true);
    expect(rows.length).toBeLessThanOrEqual(1);
  });

  it("lists models publicly through the gateway", async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/models?limit=5`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ id: string; pricing: unknown }> };
    expect(body.data).toHaveLength(5);
    expect(body.data[0]?.pricing).toBeDefined();
  });
});
