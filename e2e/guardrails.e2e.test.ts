import { createHash, randomBytes } from "node:crypto";
import { Browser, gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";
import { seatedPerson, userIdOf } from "./signed-in-people";

/**
 * A guardrail through the separate-process stack: created and assigned to an inference key through
 * the gateway (forwarded to routing with the signed identity), then applied by routing's Plan to
 * that key's chat completions, over the request's own preferences, and named in `no_route`. A
 * guardrail's budget binds each key it applies to in the ledger, through the gateway's Admit. A
 * guardrail assigned to a member binds the inference keys that member made from their session or
 * approved through PKCE.
 */
describe("guardrails through the separate-process stack", () => {
  let stack: Stack;
  let groq: FakeUpstream;
  let together: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let guarded: ReturnType<typeof gatewayClient>;
  let free: ReturnType<typeof gatewayClient>;
  const MODEL = "meta-llama/llama-4-scout";
  const ask = { model: MODEL, messages: [{ role: "user", content: "Who serves?" }] };

  beforeAll(async () => {
    [groq, together] = await Promise.all([startFakeOpenAi(), startFakeOpenAi()]);
    stack = await startStack({ providerBaseUrls: { groq: groq.url, together: together.url } });
    const org = await stack.createOrg("Guarded Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const [provider, key] of [
      ["groq", "gsk-guarded-0001"],
      ["together", "tg-guarded-0002"],
    ]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: key })).status).toBe(201);
    }
    const guardedKey = await mgmt.post("/v1/keys", { name: "guarded" });
    const freeKey = await mgmt.post("/v1/keys", { name: "free" });
    guarded = gatewayClient(stack.gatewayUrl, guardedKey.json.data.key as string);
    free = gatewayClient(stack.gatewayUrl, freeKey.json.data.key as string);

    const created = await mgmt.post("/v1/guardrails", { name: "together only", allowed_providers: ["together"] });
    expect(created.status).toBe(201);
    const assigned = await mgmt.post(`/v1/guardrails/${created.json.data.id}/assignments`, { subject_type: "key", subject_id: guardedKey.json.data.hash });
    expect(assigned.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([groq, together].map((f) => f?.close()));
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("lists the guardrail with its assignment", async () => {
    const res = await mgmt.get("/v1/guardrails");
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.data[0]).toMatchObject({ name: "together only", provider_allowlist: ["together"], assignments: [{ subject_type: "key" }] });
  });

  it("serves the guarded key from the allowed provider even when the request orders another first", async () => {
    together.script({ text: "Together here.", usage: { prompt: 3, completion: 2 } });
    const res = await guarded.post("/v1/chat/completions", { ...ask, provider: { order: ["groq"] } });
    expect(res.status).toBe(200);
    expect(together.requests).toHaveLength(1);
    expect(groq.requests).toHaveLength(0);

    // Another key of the organisation is not restricted: its order is followed.
    groq.script({ text: "Groq here.", usage: { prompt: 3, completion: 2 } });
    expect((await free.post("/v1/chat/completions", { ...ask, provider: { order: ["groq"] } })).status).toBe(200);
    expect(groq.requests).toHaveLength(1);
  });

  it("answers 404 no_route naming the guardrail and the preference when nothing is left", async () => {
    const res = await guarded.post("/v1/chat/completions", { ...ask, provider: { only: ["groq"] } });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("no_route");
    expect(res.json.error.details.unsatisfied_filters).toEqual(expect.arrayContaining(["guardrail.allowed_providers", "provider.only"]));
  });

  it("refuses a key past its guardrail's budget with 403 budget_exceeded (scope guardrail) while another key goes on", async () => {
    const budgetKey = await mgmt.post("/v1/keys", { name: "budgeted" });
    const budgeted = gatewayClient(stack.gatewayUrl, budgetKey.json.data.key as string);
    const g = await mgmt.post("/v1/guardrails", { name: "a cent a month", limit_usd: 0.01, reset_interval: "monthly", include_byok_in_budgets: true });
    expect(g.status).toBe(201);
    expect(g.json.data).toMatchObject({ budget_nanodollars: "10000000", budget_reset: "monthly" });
    expect((await mgmt.post(`/v1/guardrails/${g.json.data.id}/assignments`, { subject_type: "key", subject_id: budgetKey.json.data.hash })).status).toBe(201);

    // Its worst case (a few prompt tokens, max_tokens 8) fits; a million reported prompt tokens at
    // $0.18 per million take the key past the cent.
    const small = { ...ask, max_tokens: 8, provider: { only: ["together"] } };
    together.script({ text: "Spent.", usage: { prompt: 1_000_000, completion: 0 } });
    expect((await budgeted.post("/v1/chat/completions", small)).status).toBe(200);
    // The preview checks the same limits without a hold: it refuses once the settlement landed.
    const { max_tokens: _, ...previewBody } = small;
    await waitFor(async () => (await budgeted.post("/v1/routing/preview", previewBody)).json.data?.would_dispatch === false, {
      timeoutMs: 15_000,
      intervalMs: 250,
      what: "the guardrail budget to be spent",
    });
    const preview = await budgeted.post("/v1/routing/preview", previewBody);
    expect(preview.json.data.refusal).toMatchObject({ status: 403, code: "budget_exceeded", scope: "guardrail" });

    const served = together.requests.length;
    const refused = await budgeted.post("/v1/chat/completions", small);
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: "budget_exceeded", details: { scope: "guardrail" } });
    expect(refused.json.error.message).toMatch(/guardrail has reached its monthly spend limit of \$0\.01/);
    expect(together.requests.length).toBe(served);

    // Evaluated per key: a key the guardrail is not assigned to is not counted against it.
    expect((await free.post("/v1/chat/completions", small)).status).toBe(200);
    expect(together.requests.length).toBe(served + 1);
  });

  describe("assigned to a member", () => {
    let member: Browser;
    let colleague: Browser;
    let memberKey: ReturnType<typeof gatewayClient>;
    let colleagueKey: ReturnType<typeof gatewayClient>;
    let keyGuarded: ReturnType<typeof gatewayClient>;
    let guardrailId: string;
    const served = { ...ask, provider: { only: ["together"] } };

    /** An inference key the signed-in `person` approves for a headless app (OAuth PKCE), exchanged by the app. */
    async function pkceKey(person: Browser): Promise<string> {
      const verifier = randomBytes(48).toString("base64url");
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      const approved = await person.post("/v1/auth/pkce/approve", { code_challenge: challenge, code_challenge_method: "S256", key_label: "notes app" });
      expect(approved.status).toBe(200);
      const exchanged = await fetch(`${stack.gatewayUrl}/v1/auth/keys`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: approved.body.data.code, code_verifier: verifier }),
      });
      expect(exchanged.status).toBe(200);
      return ((await exchanged.json()) as { data: { key: string } }).data.key;
    }

    async function keyOf(person: Browser): Promise<ReturnType<typeof gatewayClient>> {
      const created = await person.post("/v1/keys", { name: "from my session" });
      expect(created.status).toBe(201);
      return gatewayClient(stack.gatewayUrl, created.body.data.key as string);
    }

    beforeAll(async () => {
      const org = await stack.createOrg("Members Co");
      const owner = gatewayClient(stack.gatewayUrl, org.managementKey);
      expect((await owner.post("/v1/provider-keys", { provider: "together", api_key: "tg-members-0003" })).status).toBe(201);
      member = await seatedPerson(stack.gatewayUrl, org, "member");
      colleague = await seatedPerson(stack.gatewayUrl, org, "member");
      memberKey = await keyOf(member);
      colleagueKey = await keyOf(colleague);
      const cliMade = await owner.post("/v1/keys", { name: "no person" });
      keyGuarded = gatewayClient(stack.gatewayUrl, cliMade.json.data.key as string);

      // An allowlist without the model asked for: whatever it binds is refused.
      const g = await owner.post("/v1/guardrails", { name: "gpt only", allowed_models: ["openai/gpt-4o-mini"] });
      expect(g.status).toBe(201);
      guardrailId = g.json.data.id as string;
      const toMember = await owner.post(`/v1/guardrails/${g.json.data.id}/assignments`, { subject_type: "member", subject_id: await userIdOf(member) });
      expect(toMember.status).toBe(201);
      const toKey = await owner.post(`/v1/guardrails/${g.json.data.id}/assignments`, { subject_type: "key", subject_id: cliMade.json.data.hash });
      expect(toKey.status).toBe(201);
    }, 60_000);

    it("refuses the member's own key as it refuses a key the guardrail is assigned to, and serves a colleague's", async () => {
      const before = together.requests.length;
      const byKeyAssignment = await keyGuarded.post("/v1/chat/completions", served);
      expect(byKeyAssignment.status).toBe(404);
      expect(byKeyAssignment.json.error.details.unsatisfied_filters).toContain("guardrail.allowed_models");

      const byMember = await memberKey.post("/v1/chat/completions", served);
      expect(byMember.status).toBe(404);
      expect(byMember.json.error).toEqual(byKeyAssignment.json.error);
      expect(together.requests.length).toBe(before);

      together.script({ text: "Together here.", usage: { prompt: 3, completion: 2 } });
      expect((await colleagueKey.post("/v1/chat/completions", served)).status).toBe(200);
      expect(together.requests.length).toBe(before + 1);
    });

    it("shows the member's guardrail in the member key's route preview", async () => {
      const mine = await memberKey.post("/v1/routing/preview", served);
      expect(mine.status).toBe(200);
      expect(mine.json.data).toMatchObject({ would_dispatch: false, guardrails: { applied: [guardrailId] } });
      const theirs = await colleagueKey.post("/v1/routing/preview", served);
      expect(theirs.json.data).toMatchObject({ would_dispatch: true, guardrails: { applied: [] } });
    });

    it("binds a key the member approved for an app through PKCE, and not one their colleague approved", async () => {
      const approved = gatewayClient(stack.gatewayUrl, await pkceKey(member));
      const refused = await approved.post("/v1/chat/completions", served);
      expect(refused.status).toBe(404);
      expect(refused.json.error).toMatchObject({ code: "no_route", details: { unsatisfied_filters: expect.arrayContaining(["guardrail.allowed_models"]) } });

      const colleagues = gatewayClient(stack.gatewayUrl, await pkceKey(colleague));
      together.script({ text: "Still here.", usage: { prompt: 3, completion: 2 } });
      expect((await colleagues.post("/v1/chat/completions", served)).status).toBe(200);
    });
  });
});
