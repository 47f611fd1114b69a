import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * Content filters through the separate-process stack: a guardrail with builtin detectors and the
 * organisation's own patterns, assigned to one key. Routing's Plan names the filters; the gateway
 * runs them over the messages: block refuses with 403 `content_filtered` before anything goes
 * upstream, redact rewrites what goes upstream, flag records. Matched text is never returned.
 */
describe("content filters through the separate-process stack", () => {
  let stack: Stack;
  let upstream: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let guarded: ReturnType<typeof gatewayClient>;
  let free: ReturnType<typeof gatewayClient>;
  let guardrailId: string;
  const MODEL = "openai/gpt-4o-mini";
  const ask = (content: string) => ({ model: MODEL, messages: [{ role: "system", content: "Be brief." }, { role: "user", content }] });

  beforeAll(async () => {
    upstream = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: upstream.url } });
    const org = await stack.createOrg("Filtered Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-filtered-0001" })).status).toBe(201);
    const guardedKey = await mgmt.post("/v1/keys", { name: "guarded" });
    guarded = gatewayClient(stack.gatewayUrl, guardedKey.json.data.key as string);
    free = gatewayClient(stack.gatewayUrl, (await mgmt.post("/v1/keys", { name: "free" })).json.data.key as string);

    const created = await mgmt.post("/v1/guardrails", {
      name: "no personal data",
      content_filter_builtins: ["email", "credit_card"],
      content_filters: [
        { name: "codename", pattern: "(?i)project\\s+falcon", action: "block" },
        { name: "ticket", pattern: "TCK-\\d+", action: "redact" },
        { name: "competitor", pattern: "(?i)\\bacme\\b", action: "flag" },
      ],
      filter_allowlist: ["support@example.com"],
    });
    expect(created.status).toBe(201);
    guardrailId = created.json.data.id as string;
    const assigned = await mgmt.post(`/v1/guardrails/${guardrailId}/assignments`, { subject_type: "key", subject_id: guardedKey.json.data.hash });
    expect(assigned.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("refuses a blocked message with 403 content_filtered naming the labels, never the text, and contacts nobody", async () => {
    const before = upstream.requests.length;
    const res = await guarded.post("/v1/chat/completions", ask("Mail jane.roe@corp.example about Project  Falcon"));
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("content_filtered");
    expect(res.json.error.details.labels).toEqual(["codename", "email"]);
    expect(JSON.stringify(res.json)).not.toMatch(/jane\.roe|falcon/i);
    expect(upstream.requests.length).toBe(before);

    // The refusal is recorded with its labels.
    const recorded = await waitFor(async () => {
      const list = await mgmt.get("/v1/activity?limit=5");
      return (list.json.data as Array<{ id: string; status: string }> | undefined)?.find((r) => r.status === "refused");
    });
    const one = await mgmt.get(`/v1/activity/requests/${recorded.id}`);
    expect(one.json.data.content_filter_labels).toEqual(["codename", "email"]);
    expect(JSON.stringify(one.json)).not.toMatch(/jane\.roe/);
  });

  it("redacts what goes upstream, keeps allowlisted phrases, flags without changing, and serves", async () => {
    upstream.script({ text: "Noted.", usage: { prompt: 12, completion: 2 } });
    const before = upstream.requests.length;
    const res = await guarded.post("/v1/chat/completions", ask("Ticket TCK-4521 from support@example.com mentions ACME."));
    expect(res.status).toBe(200);
    const sent = upstream.requests[before]!.body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages[1]!.content).toBe("Ticket [REDACTED:ticket] from support@example.com mentions ACME.");
    expect(sent.messages[0]!.content).toBe("Be brief.");

    const id = res.json.id as string;
    const labels = await waitFor(async () => (await mgmt.get(`/v1/activity/requests/${id}`)).json.data?.content_filter_labels as string[] | undefined);
    expect(labels).toEqual(["competitor", "ticket"]);
  });

  it("filters embeddings input as it filters messages: each text redacted before it is embedded, a blocked one refused", async () => {
    const before = upstream.requests.length;
    const res = await guarded.post("/v1/embeddings", { model: "openai/text-embedding-3-small", input: ["Ticket TCK-77 open", "plain text"] });
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(2);
    expect(upstream.requests[before]!.body).toMatchObject({ input: ["Ticket [REDACTED:ticket] open", "plain text"] });

    const blocked = await guarded.post("/v1/embeddings", { model: "openai/text-embedding-3-small", input: ["fine", "all about project falcon"] });
    expect(blocked.status).toBe(403);
    expect(blocked.json.error).toMatchObject({ code: "content_filtered", type: "permission_error" });
    expect(JSON.stringify(blocked.json)).not.toMatch(/falcon/i);
    expect(upstream.requests.length).toBe(before + 1);
  });

  it("leaves keys the guardrail is not assigned to alone", async () => {
    upstream.script({ text: "Sure.", usage: { prompt: 12, completion: 2 } });
    const before = upstream.requests.length;
    const res = await free.post("/v1/chat/completions", ask("Ticket TCK-4521 for jane.roe@corp.example"));
    expect(res.status).toBe(200);
    const sent = upstream.requests[before]!.body as { messages: Array<{ content: string }> };
    expect(sent.messages[1]!.content).toBe("Ticket TCK-4521 for jane.roe@corp.example");
  });

  it("previews the filter: labels and the refusal with messages, null without, and the applied guardrail", async () => {
    const blocked = await guarded.post("/v1/routing/preview", { model: MODEL, messages: [{ role: "user", content: "card 4111 1111 1111 1111" }] });
    expect(blocked.status).toBe(200);
    expect(blocked.json.data).toMatchObject({
      would_dispatch: false,
      refusal: { code: "content_filtered", status: 403, labels: ["credit_card"] },
      content_filter: { labels: ["credit_card"] },
      guardrails: { applied: [guardrailId] },
    });
    expect(JSON.stringify(blocked.json)).not.toMatch(/4111/);

    const clean = await guarded.post("/v1/routing/preview", { model: MODEL, messages: [{ role: "user", content: "hello" }] });
    expect(clean.json.data).toMatchObject({ would_dispatch: true, refusal: null, content_filter: { labels: [] } });
    const without = await guarded.post("/v1/routing/preview", { model: MODEL });
    expect(without.json.data.content_filter).toBeNull();
  });

  it("lets a spent budget bind before a content filter, and a filter before routing", async () => {
    const spentKey = await mgmt.post("/v1/keys", { name: "spent", limit: 0.000000001, limit_reset: "lifetime", include_byok_in_limit: true });
    await mgmt.post(`/v1/guardrails/${guardrailId}/assignments`, { subject_type: "key", subject_id: spentKey.json.data.hash });
    const spent = gatewayClient(stack.gatewayUrl, spentKey.json.data.key as string);
    upstream.script({ text: "spend", usage: { prompt: 1000, completion: 10 } });
    expect((await spent.post("/v1/chat/completions", ask("spend it"))).status).toBe(200);

    const budgetFirst = await spent.post("/v1/chat/completions", ask("card 4111 1111 1111 1111"));
    expect(budgetFirst.status).toBe(403);
    expect(budgetFirst.json.error.code).toBe("budget_exceeded");

    // An unknown model with a blocked message: the filter is the refusal, not routing's 404.
    const filterFirst = await guarded.post("/v1/chat/completions", { ...ask("card 4111 1111 1111 1111"), model: "nobody/nothing" });
    expect(filterFirst.status).toBe(403);
    expect(filterFirst.json.error.code).toBe("content_filtered");
  });

  it("refuses a pattern RE2 cannot run in linear time with a 400 naming it, and stores nothing", async () => {
    const res = await mgmt.post("/v1/guardrails", {
      name: "lookahead",
      content_filters: [{ name: "x", pattern: "(?=secret)\\w+", action: "block" }],
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/content_filters\.0\.pattern/);
    const list = await mgmt.get("/v1/guardrails");
    expect((list.json.data as Array<{ name: string }>).map((g) => g.name)).toEqual(["no personal data"]);
  });
});
