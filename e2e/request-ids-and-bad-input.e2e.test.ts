import { Client } from "pg";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";
import { deepBodies, deepObject, DEEP } from "./faults/deep-bodies";

/**
 * Bad input stays the caller's, and every answer can be matched to its record: on the
 * separate-process stack, a body nested 100,000 deep in each JSON field of each ingress and of the
 * management routes is a 400 naming the field, nothing reaches a provider and routing's shared
 * endpoint health does not move; every answer carries `x-request-id`, the generation id on the
 * inference routes (2xx, 4xx, 5xx and streams), which names the activity row, and a 5xx is logged
 * once with it.
 */

const MODEL = "openai/gpt-4o-mini";
const GENERATION_ID = /^gen-[0-9a-f]{32}$/;
const REQUEST_ID = /^req-[0-9a-f-]{36}$/;

describe("request ids and bad input", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmtKey: string;
  let mgmt: ReturnType<typeof gatewayClient>;
  let client: ReturnType<typeof gatewayClient>;
  let key: string;
  let db: Client;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    // Eight processes on a busy two-core box can miss the default 20-second start limit.
    stack = await startStack({ providerBaseUrls: { openai: openai.url }, startTimeoutMs: 60_000 });
    const org = await stack.createOrg("Request Ids Co");
    mgmtKey = org.managementKey;
    mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-reqid-0001" })).status).toBe(201);
    const created = await mgmt.post("/v1/keys", { name: "inference" });
    expect(created.status).toBe(201);
    key = created.json.data.key as string;
    client = gatewayClient(stack.gatewayUrl, key);
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
  }, 150_000);

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await openai?.close();
  });

  beforeEach(() => openai.reset());

  /** Routing's health counts, over every endpoint: what one tenant's requests could degrade for all. */
  const health = async (): Promise<{ attempts: number; failures: number }> => {
    const r = await db.query<{ attempts: number; failures: number }>(
      "SELECT coalesce(sum(attempts), 0)::int AS attempts, coalesce(sum(failures), 0)::int AS failures FROM routing.endpoint_health_buckets",
    );
    return r.rows[0]!;
  };

  const activityRow = (id: string) =>
    waitFor(async () => {
      const r = await mgmt.get(`/v1/activity/requests/${id}`);
      return r.status === 200 ? (r.json.data as Record<string, unknown>) : undefined;
    });

  it("answers a body nested 100,000 deep in each JSON field of each ingress and management route with a 400 naming it, and moves no endpoint's health", async () => {
    const before = await health();
    const deep = deepObject(DEEP);
    const bodies = [
      ...deepBodies().map((b) => ({ ...b, token: key })),
      // Served by the gateway, and forwarded to the alerts service: the gateway refuses it before forwarding.
      { path: "/v1/keys", at: "metadata", field: "metadata", body: `{"name":"k","metadata":${deep}}`, token: mgmtKey },
      { path: "/v1/alerts/channels", at: "target", field: "target", body: `{"kind":"webhook","target":${deep}}`, token: mgmtKey },
    ];
    const wrong: string[] = [];
    for (const b of bodies) {
      const res = await fetch(`${stack.gatewayUrl}${b.path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${b.token}`, "content-type": "application/json" },
        body: b.body,
      });
      const text = await res.text();
      const id = res.headers.get("x-request-id") ?? "";
      // Anthropic's envelope carries the message only; the others carry details.field too.
      const names = text.includes(`${b.field}.`) || text.includes(`"${b.field}"`);
      if (res.status !== 400 || !names || !text.includes("nested more than 128 levels deep") || !/^(gen|req)-/.test(id)) {
        wrong.push(`${b.path} ${b.at}: ${res.status} ${id} ${text.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(openai.requests).toHaveLength(0);
    // Nothing was dispatched, so nothing was published: the health the bus would have fed is as it was.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await health()).toEqual(before);

    // The control: a provider's own failure does move it, through the same path.
    openai.script({ failure: { kind: "status", status: 500 } });
    const failed = await client.post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }] });
    expect(failed.status).toBe(502);
    const after = await waitFor(async () => {
      const h = await health();
      return h.failures > before.failures ? h : undefined;
    });
    expect(after.failures).toBe(before.failures + 1);
  }, 120_000);

  it("names the generation on a whole answer and a stream, and the id finds the activity row", async () => {
    const whole = await client.post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }] });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("x-request-id")).toMatch(GENERATION_ID);
    expect(whole.headers.get("x-request-id")).toBe(whole.json.id);
    expect((await activityRow(whole.json.id as string)).id).toBe(whole.json.id);

    const streamed = await client.stream({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
    expect(streamed.status).toBe(200);
    expect(streamed.done).toBe(true);
    const id = streamed.headers.get("x-request-id")!;
    expect(id).toMatch(GENERATION_ID);
    expect(new Set(streamed.chunks.map((c: { id: string }) => c.id))).toEqual(new Set([id]));
    expect((await activityRow(id)).id).toBe(id);
  }, 60_000);

  it("names a 4xx and a 5xx, the 5xx's record and its one log line", async () => {
    const refused = await client.post("/v1/chat/completions", { model: "nobody/no-such-model", messages: [{ role: "user", content: "hi" }] });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("x-request-id")).toMatch(GENERATION_ID);

    openai.script({ failure: { kind: "status", status: 500 } });
    const failed = await client.post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }] });
    expect(failed.status).toBe(502);
    const id = failed.headers.get("x-request-id")!;
    expect(id).toMatch(GENERATION_ID);
    expect(await activityRow(id)).toMatchObject({ id, status: "error" });
    const lines = await waitFor(() => {
      const found = stack.logs().split("\n").filter((l) => l.includes(id) && l.includes("gateway.chat.unavailable"));
      return found.length > 0 ? found : undefined;
    });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!.slice(lines[0]!.indexOf("{")))).toMatchObject({ id, status: 502, code: "upstream_error" });
  }, 60_000);

  it("gives management and forwarded routes the gateway's own id, never the caller's", async () => {
    const own = await mgmt.get("/v1/keys", { "x-request-id": "gen-00000000000000000000000000000000" });
    const forwarded = await mgmt.get("/v1/alerts/channels", { "x-request-id": "mine-1" });
    const missing = await mgmt.get("/v1/nothing-here");
    expect([own.status, forwarded.status, missing.status]).toEqual([200, 200, 404]);
    const ids = [own, forwarded, missing].map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(3);
  }, 60_000);
});
