import { Browser, gatewayClient, startFakeOpenAi, startStack, waitFor, writeOrderedCatalog, type FakeUpstream, type Stack } from "@router/testkit";
import { seatedPerson, userIdOf } from "./signed-in-people";

const MODEL = "meta-llama/llama-3.3-70b-instruct";
const CHAT = { model: MODEL, messages: [{ role: "user", content: "hello from the dashboard" }] };

/**
 * Chat completions and the route preview with a dashboard session (the signed-in person), over the
 * separate-process stack: the session's role decides, the request is charged to the person in the
 * organisation's first workspace, and a signed-out session is refused with the error envelope.
 */
describe("inference with a dashboard session", () => {
  let stack: Stack;
  let groq: FakeUpstream;
  let org: { orgId: string; managementKey: string };
  let mgmt: ReturnType<typeof gatewayClient>;

  beforeAll(async () => {
    groq = await startFakeOpenAi();
    stack = await startStack({
      providerBaseUrls: { groq: groq.url },
      extraEnv: { ROUTING_CATALOG_FILE: writeOrderedCatalog({ [MODEL]: ["groq"] }) },
    });
    org = await stack.createOrg("Session inference");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "groq", api_key: "gsk-session-0001" })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await groq?.close();
  });

  it("a developer's session chats and previews as that person, charged to the organisation's first workspace", async () => {
    const developer = await seatedPerson(stack.gatewayUrl, org, "member");
    const userId = await userIdOf(developer);
    const before = groq.requests.length;

    const preview = await developer.post("/v1/routing/preview", { model: MODEL });
    expect(preview.status).toBe(200);
    expect(preview.body.data).toMatchObject({ would_dispatch: true, winner: { provider: "groq" } });
    // The preview sends nothing.
    expect(groq.requests.length).toBe(before);

    groq.script({ text: "hi there", usage: { prompt: 1000, completion: 20 } });
    const chat = await developer.post("/v1/chat/completions", CHAT);
    expect(chat.status).toBe(200);
    expect(chat.body.choices[0].message.content).toBe("hi there");
    expect(groq.requests.length).toBe(before + 1);

    const workspaces = await mgmt.get("/v1/workspaces");
    const first = workspaces.json.data[0] as { id: string };
    const recorded = await waitFor(
      async () => {
        const list = await mgmt.get("/v1/activity?limit=10");
        return (list.json.data as Array<{ id: string; workspace_id: string | null }>).find((r) => r.id === chat.body.id);
      },
      { what: "the session's request in activity", timeoutMs: 20_000 },
    );
    expect(recorded.workspace_id).toBe(first.id);
    const detail = await mgmt.get(`/v1/activity/requests/${encodeURIComponent(chat.body.id as string)}`);
    expect(detail.status).toBe(200);
    expect(detail.json.data.key).toEqual({ hash: `dashboard:${org.orgId}:${userId}`, name: "Dashboard" });
  });

  it("a session exchanged from the management key chats too, and its role decides: a finance seat previews but may not spend", async () => {
    const owner = new Browser(stack.gatewayUrl);
    expect((await owner.post("/v1/auth/exchange", { key: org.managementKey })).status).toBe(200);
    groq.script({ text: "owner here", usage: { prompt: 10, completion: 2 } });
    const chat = await owner.post("/v1/chat/completions", CHAT);
    expect(chat.status).toBe(200);

    const finance = await seatedPerson(stack.gatewayUrl, org, "billing");
    expect((await finance.post("/v1/routing/preview", { model: MODEL })).status).toBe(200);
    const refused = await finance.post("/v1/chat/completions", CHAT);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "permission_denied" });
    expect(refused.body.error.message).toContain("config:write");
  });

  it("the person's guardrails bind their session, in the preview and in chat", async () => {
    const developer = await seatedPerson(stack.gatewayUrl, org, "member");
    const guardrail = await mgmt.post("/v1/guardrails", { name: "together only", allowed_providers: ["together"] });
    expect(guardrail.status).toBe(201);
    const id = guardrail.json.data.id as string;
    expect((await mgmt.post(`/v1/guardrails/${id}/assignments`, { subject_type: "member", subject_id: await userIdOf(developer) })).status).toBe(201);
    const before = groq.requests.length;
    const preview = await waitFor(
      async () => {
        const res = await developer.post("/v1/routing/preview", { model: MODEL });
        return res.body.data?.guardrails?.applied?.includes(id) ? res : undefined;
      },
      { what: "the member's guardrail to apply", timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(preview.body.data).toMatchObject({ would_dispatch: false, winner: null });
    const chat = await developer.post("/v1/chat/completions", CHAT);
    expect(chat.status).toBeGreaterThanOrEqual(400);
    expect(chat.status).toBeLessThan(500);
    expect(groq.requests.length).toBe(before);
  });

  it("a POST with the session cookie but without the CSRF token is refused", async () => {
    const developer = await seatedPerson(stack.gatewayUrl, org, "member");
    for (const path of ["/v1/chat/completions", "/v1/routing/preview"]) {
      const res = await developer.post(path, path.endsWith("preview") ? { model: MODEL } : CHAT, { csrf: false });
      expect(res.status).toBe(403);
      expect(res.body.error.details.field).toBe("x-csrf-token");
    }
  });

  it("a signed-out session is refused on both routes with 401 and the error envelope", async () => {
    const developer = await seatedPerson(stack.gatewayUrl, org, "member");
    // The cookies as they were, replayed after sign-out (as a stolen or stale cookie would be).
    const cookie = await developer.jar.getCookieString(stack.gatewayUrl);
    const csrf = (await developer.cookie("rt_csrf")) ?? "";
    expect((await developer.post("/v1/auth/signout")).status).toBeLessThan(300);
    for (const [path, body] of [
      ["/v1/chat/completions", CHAT],
      ["/v1/routing/preview", { model: MODEL }],
    ] as const) {
      const res = await fetch(`${stack.gatewayUrl}${path}`, {
        method: "POST",
        headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(401);
      const json = (await res.json()) as { error: { code: string; message: string } };
      expect(json.error.code).toBe("unauthorized");
      expect(json.error.message).toContain("sign in again");
    }
  });

  it("an inference key still works, and with neither a key nor a session the answer is 401", async () => {
    const key = (await mgmt.post("/v1/keys", { name: "app" })).json.data.key as string;
    groq.script({ text: "key", usage: { prompt: 1, completion: 1 } });
    expect((await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", CHAT)).status).toBe(200);
    const none = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, { method: "POST", body: JSON.stringify(CHAT), headers: { "content-type": "application/json" } });
    expect(none.status).toBe(401);
  });
});
