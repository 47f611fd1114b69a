import Anthropic from "@anthropic-ai/sdk";
import {
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  gatewayClient,
  startFakeBedrock,
  startFakeVertex,
  startStack,
  waitFor,
  type FakeBedrock,
  type FakeVertex,
  type Stack,
} from "@router/testkit";

/**
 * One organisation, Claude on two clouds in the EU: Bedrock in eu-central-1 and Vertex AI in
 * europe-west1 (and a US deployment of each, which "EU only" must never reach). A throttled Bedrock
 * region moves the request to Vertex before the first byte, in every ingress format.
 */

const CLAUDE = "anthropic/claude-sonnet-4.5";
const EU_FIRST_BEDROCK = { order: ["bedrock", "vertex"], allow_fallbacks: true };
const user = (text: string) => [{ role: "user", content: text }];

describe("failover between clouds, inside the organisation's regions", () => {
  let stack: Stack;
  let bedrock: FakeBedrock;
  let vertex: FakeVertex;
  let mgmt: ReturnType<typeof gatewayClient>;
  let client: ReturnType<typeof gatewayClient>;
  let inferenceKey: string;
  const record = (id: string) =>
    waitFor(
      async () => {
        const r = await mgmt.get(`/v1/activity/requests/${id}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      },
      { timeoutMs: 15_000, what: "the request's record" },
    );

  beforeAll(async () => {
    bedrock = await startFakeBedrock();
    vertex = await startFakeVertex({ regions: ["europe-west1", "us-east5"] });
    stack = await startStack({ providerBaseUrls: { bedrock: bedrock.url, vertex: vertex.url } });
    const org = await stack.createOrg("Two clouds");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const region of ["eu-central-1", "us-east-1"]) {
      const added = await mgmt.post("/v1/provider-keys", {
        provider: "bedrock",
        bedrock: { region, access_key_id: FAKE_AWS_ACCESS_KEY_ID, secret_access_key: FAKE_AWS_SECRET_ACCESS_KEY },
      });
      expect(added.status).toBe(201);
    }
    const account = vertex.serviceAccount();
    for (const region of ["europe-west1", "us-east5"]) {
      const added = await mgmt.post("/v1/provider-keys", { provider: "vertex", vertex: { project: vertex.project, region, service_account: account } });
      expect(added.status).toBe(201);
    }
    inferenceKey = (await mgmt.post("/v1/keys", { name: "claude app" })).json.data.key as string;
    client = gatewayClient(stack.gatewayUrl, inferenceKey);
    expect((await mgmt.put("/v1/privacy", { regions: ["eu"] })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([bedrock?.close(), vertex?.close()]);
  });

  beforeEach(() => {
    bedrock.reset();
    vertex.reset();
    bedrock.failRegion("eu-central-1", null);
  });

  it("serves Claude from Bedrock in eu-central-1 while it answers, and never from a US deployment", async () => {
    const res = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), provider: EU_FIRST_BEDROCK });
    expect(res.status).toBe(200);
    expect(res.json.provider).toBe("bedrock");
    const rec = await record(res.json.id as string);
    expect(rec.attempts.map((a: Record<string, any>) => a.endpoint_id)).toEqual(["ep_bedrock_claude-sonnet-4.5_eu-central-1"]);
  });

  it("moves from a throttled Bedrock region to Claude on Vertex in europe-west1, for chat completions and Messages, stream and not", async () => {
    bedrock.failRegion("eu-central-1", { kind: "status", status: 429, code: "ThrottlingException", message: "Too many requests, please wait before trying again." });
    const res = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), provider: EU_FIRST_BEDROCK });
    expect(res.status).toBe(200);
    expect(res.json.provider).toBe("vertex");
    const rec = await record(res.json.id as string);
    expect(rec.attempts.map((a: Record<string, any>) => [a.endpoint_id, a.status])).toEqual([
      ["ep_bedrock_claude-sonnet-4.5_eu-central-1", "error"],
      ["ep_vertex_claude-sonnet-4.5_europe-west1", "ok"],
    ]);
    expect(rec.attempts[0].error_code).toBe("ThrottlingException");
    expect(JSON.stringify(rec)).not.toContain("please wait");

    const streamed = await client.stream({ model: CLAUDE, messages: user("Hi"), provider: EU_FIRST_BEDROCK });
    expect(streamed.status).toBe(200);
    expect(streamed.chunks.every((c: Record<string, any>) => c.provider === "vertex")).toBe(true);

    const anthropic = new Anthropic({ apiKey: inferenceKey, baseURL: stack.gatewayUrl, maxRetries: 0 });
    const system = [{ type: "text" as const, text: "Cached preamble. ".repeat(50), cache_control: { type: "ephemeral" as const } }];
    const message = await anthropic.messages.create({ model: CLAUDE, max_tokens: 64, system, messages: [{ role: "user", content: "Hi" }], provider: EU_FIRST_BEDROCK } as never);
    expect(message.content[0]).toMatchObject({ type: "text" });
    const toVertex = vertex.modelRequests().at(-1);
    expect((toVertex?.body as Record<string, any>).system[0].cache_control).toEqual({ type: "ephemeral" });
    const text = await anthropic.messages.stream({ model: CLAUDE, max_tokens: 64, messages: [{ role: "user", content: "Hi" }], provider: EU_FIRST_BEDROCK } as never).finalText();
    expect(text.length).toBeGreaterThan(0);

    // Nothing went to a US deployment of either cloud.
    expect(vertex.modelRequests().every((r) => r.path.includes("/locations/europe-west1/"))).toBe(true);
    expect(bedrock.requests.every((r) => !JSON.stringify(r.headers).includes("us-east-1"))).toBe(true);
  });

  it("keeps a key under a guardrail of one region there, whatever the request's provider order says", async () => {
    const guardrail = await mgmt.post("/v1/guardrails", { name: "Frankfurt only", allowed_data_regions: ["eu-central-1"] });
    expect(guardrail.status).toBe(201);
    const key = (await mgmt.post("/v1/keys", { name: "frankfurt app" })).json.data as { key: string; hash: string };
    const assigned = await mgmt.post(`/v1/guardrails/${guardrail.json.data.id as string}/assignments`, { subject_type: "key", subject_id: key.hash });
    expect(assigned.status).toBe(201);
    const frankfurt = gatewayClient(stack.gatewayUrl, key.key);
    const res = await frankfurt.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), provider: { order: ["vertex", "bedrock"] } });
    expect(res.status).toBe(200);
    expect(res.json.provider).toBe("bedrock");
    expect(vertex.modelRequests()).toHaveLength(0);

    // Throttled there, the request is refused rather than moved out of the guardrail's region.
    bedrock.failRegion("eu-central-1", { kind: "status", status: 429, code: "ThrottlingException", message: "Too many requests" });
    const throttled = await frankfurt.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), provider: { order: ["vertex", "bedrock"] } });
    expect(throttled.status).toBe(429);
    expect(vertex.modelRequests()).toHaveLength(0);
  });
});
