import { managementRoute, runaway } from "@router/management-api";
import { ManualClock } from "@router/money";
import { ledger as ledgerProto } from "@router/proto";
import { newIdentityKeys } from "@router/testkit";
import { z } from "zod";
import { startActivityHarness } from "../services/activity/test/activity-harness";
import { completedEvent, identityHeader as activityIdentity } from "../services/activity/test/request-events";
import { recordRequests } from "../services/activity/src/recording/request-record";
import { startAlertsHarness } from "../services/alerts/test/alerts-harness";
import { startBroadcastHarness } from "../services/broadcast/test/broadcast-harness";
import { call as gatewayCall, newOrganisation, startHarness as startGatewayHarness } from "../services/gateway/test/harness";
import { s256Challenge } from "../services/console/src/pkce/pkce-request";
import { startTestLedger } from "../services/ledger/test/ledger-fixture";
import { startReportsHarness } from "../services/reports/test/reports-harness";
import { fixtureCatalog } from "../services/routing/test/catalog-fixture";
import { managementIdentity, signedCall, startHarness, type Harness } from "../services/routing/test/routing-harness";
import { startRunawayHarness } from "../services/runaway/test/runaway-harness";

/*
 * The answer schemas of the descriptions against what the owners really answer: their routes are
 * called as the gateway calls them, and each answer must parse with its route's schema and carry no
 * field the schema leaves out.
 */

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; additionalProperties?: boolean | JsonSchema; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[] };

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v);
const accepts = (s: JsonSchema, v: unknown) => {
  if (s.type === undefined) return true;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const t = typeOf(v);
  return types.includes(t) || (t === "integer" && types.includes("number"));
};

/** Fields of `value` that `schema` does not name (an object with free-form values names them all). */
function undocumented(schema: JsonSchema, value: unknown, where: string, out: string[]): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const branch = branches.find((b) => accepts(b, value));
    if (branch) undocumented(branch, value, where, out);
    return out;
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => undocumented(schema.items as JsonSchema, v, `${where}[${i}]`, out));
  else if (typeOf(value) === "object") {
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const field = schema.properties?.[key] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
      if (field) undocumented(field, v, `${where}.${key}`, out);
      else if (schema.additionalProperties !== true) out.push(`${where}.${key}`);
    }
  }
  return out;
}

/** What is wrong with `body` as the answer of `key` (or as `schema`): schema issues, then fields it does not describe. */
function answerProblems(key: string, body: unknown, schema?: z.ZodType): string[] {
  const answer = schema ?? managementRoute(key)?.answer;
  if (!answer || answer === "csv") return [`${key}: no JSON answer described`];
  const parsed = answer.safeParse(body);
  if (!parsed.success) return parsed.error.issues.map((i) => `${key} ${i.path.join(".")}: ${i.message}`);
  // An empty metadata registry: schemas named for the API description (`.meta({ id })`) are inlined, not referenced.
  return undocumented(z.toJSONSchema(answer, { io: "output", unrepresentable: "any", metadata: z.registry() }) as JsonSchema, body, key, []);
}

describe("routing's answers", () => {
  const keys = newIdentityKeys();
  const identity = managementIdentity("org_answers");
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ catalog: fixtureCatalog(), identityKeys: keys.publicKeys });
  });
  afterAll(async () => {
    await h.close();
  });

  /** Calls `path`, checks the status, and returns the problems of the answer as `key`'s. */
  const check = async (key: string, path: string, body?: unknown): Promise<{ problems: string[]; data: any }> => {
    const [method] = key.split(" ");
    const res = await signedCall(h.baseUrl, keys, method ?? "GET", path, identity, body);
    const status = managementRoute(key)?.status ?? 200;
    if (res.status !== status) return { problems: [`${key}: ${res.status} ${JSON.stringify(res.body)}`], data: undefined };
    return { problems: answerProblems(key, res.body), data: res.body.data };
  };

  it("match their descriptions, field for field", async () => {
    const problems: string[] = [];
    const run = async (key: string, path: string, body?: unknown) => {
      const r = await check(key, path, body);
      problems.push(...r.problems);
      return r.data;
    };
    const models = await run("GET /v1/models", "/v1/models?limit=3");
    const [author, slug] = String(models?.[0]?.id ?? "a/b").split("/");
    problems.push(...answerProblems("GET /v1/models", (await signedCall(h.baseUrl, keys, "GET", "/v1/models?limit=3", null)).body));
    await run("GET /v1/models/:author/:slug", `/v1/models/${author}/${slug}`);
    await run("GET /v1/models/:id", `/v1/models/${encodeURIComponent(`${author}/${slug}`)}`);
    await run("GET /v1/models/:author/:slug/endpoints", `/v1/models/${author}/${slug}/endpoints`);
    await run("GET /v1/models/:id/endpoints", `/v1/models/${encodeURIComponent(`${author}/${slug}`)}/endpoints`);
    await run("GET /v1/providers", "/v1/providers");

    await run("GET /v1/routing/defaults", "/v1/routing/defaults");
    await run("PUT /v1/routing/defaults", "/v1/routing/defaults", { default_model: `${author}/${slug}`, default_sort: "price", lock_sort: true });

    await run("POST /v1/presets", "/v1/presets", { slug: "fast", name: "Fast", body: { temperature: 0.2, messages: [] } });
    await run("POST /v1/presets/:slug/versions", "/v1/presets/fast/versions", { body: { temperature: 0.3 }, note: "warmer" });
    await run("POST /v1/presets/:slug/revert", "/v1/presets/fast/revert", { version: 1 });
    await run("GET /v1/presets", "/v1/presets");
    await run("GET /v1/presets/:slug", "/v1/presets/fast");
    await run("DELETE /v1/presets/:slug", "/v1/presets/fast");

    const guardrail = await run("POST /v1/guardrails", "/v1/guardrails", {
      name: "tight",
      limit_usd: 5,
      reset_interval: "daily",
      enforce_zdr: { acme: true },
      content_filter_builtins: ["email"],
      content_filters: [{ name: "ticket", pattern: "T-[0-9]+", action: "redact" }],
    });
    await run("POST /v1/guardrails/:id/assignments", `/v1/guardrails/${guardrail?.id}/assignments`, { subject_type: "key", subject_id: "k".repeat(64) });
    await run("GET /v1/guardrails", "/v1/guardrails");
    await run("DELETE /v1/guardrails/:id", `/v1/guardrails/${guardrail?.id}`);

    await run("PUT /v1/privacy", "/v1/privacy", { zdr: true });
    await run("GET /v1/privacy", "/v1/privacy");
    await run("POST /v1/privacy/preview", "/v1/privacy/preview", { zdr: true, deny_training: true });
    expect(problems).toEqual([]);
  });

  it("find a field the description leaves out", () => {
    const row = { interval: "daily", limit_nanodollars: "1", include_byok: true, surprise: 1 };
    expect(answerProblems("GET /v1/workspaces/:id/budgets", { data: [row], next_cursor: null })).toEqual(["GET /v1/workspaces/:id/budgets.data[0].surprise"]);
  });
});

/** Checks one answer: its status is the description's, and its body the description's answer. */
function answerOf(key: string, res: { status: number; body: unknown }, schema?: z.ZodType): string[] {
  const status = managementRoute(key)?.status ?? 200;
  if (res.status !== status) return [`${key}: ${res.status} ${JSON.stringify(res.body)}`];
  return answerProblems(key, res.body, schema);
}

const clock = () => new ManualClock(new Date("2026-11-21T10:00:00.000Z"));

describe("the other owners' answers", () => {
  it("activity's match their descriptions", async () => {
    const c = clock();
    const h = await startActivityHarness("mgmtanswers_activity", c);
    try {
      const org = "org_answers";
      await recordRequests(h.db, [completedEvent({ requestId: "gen-answers-1", orgId: org, createdAtMs: BigInt(c.now().getTime() - 60_000) })], c.now());
      const get = async (path: string, credential: "management" | "inference" = "management") => {
        const res = await fetch(`${h.base}${path}`, { headers: await activityIdentity(org, credential) });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      const problems = [
        ...answerOf("GET /v1/activity", await get("/v1/activity?include=key")),
        ...answerOf("GET /v1/activity", await get("/v1/activity")),
        ...answerOf("GET /v1/activity/requests/:id", await get("/v1/activity/requests/gen-answers-1")),
        ...answerOf("GET /v1/activity/summary", await get("/v1/activity/summary?days=7")),
        ...answerOf("GET /v1/activity/breakdown", await get("/v1/activity/breakdown?by=model&daily=true&limit=1")),
        ...answerOf("GET /v1/activity/upstream", await get("/v1/activity/upstream")),
        ...answerOf("GET /v1/activity/conversations", await get("/v1/activity/conversations")),
        ...answerOf("GET /v1/generation", await get("/v1/generation?id=gen-answers-1", "inference")),
      ];
      expect(problems).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it("the ledger's match their descriptions", async () => {
    const l = await startTestLedger({ label: "mgmtanswers_ledger" });
    try {
      const org = "org_answers";
      const ws = "ws_answers1";
      const writer = { orgId: org, workspace: ws };
      const res = async (p: Promise<{ status: number; json: unknown }>) => {
        const r = await p;
        return { status: r.status, body: r.json };
      };
      const problems = [
        ...answerOf("PUT /v1/workspaces/:id/budgets/:interval", await res(l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, writer, { limit_usd: 5 }))),
        ...answerOf("GET /v1/workspaces/:id/budgets", await res(l.http("GET", `/v1/workspaces/${ws}/budgets`, writer))),
        ...answerOf("DELETE /v1/workspaces/:id/budgets/:interval", await res(l.http("DELETE", `/v1/workspaces/${ws}/budgets/daily`, writer))),
        ...answerOf("PUT /v1/agents/:agent/budgets/:interval", await res(l.http("PUT", "/v1/agents/planner/budgets/weekly", writer, { limit_usd: 3, workspace_id: ws }))),
        ...answerOf("GET /v1/agents", await res(l.http("GET", "/v1/agents", writer))),
        ...answerOf("DELETE /v1/agents/:agent/budgets/:interval", await res(l.http("DELETE", `/v1/agents/planner/budgets/weekly?workspace_id=${ws}`, writer))),
        ...answerOf("GET /v1/credits", await res(l.http("GET", "/v1/credits", writer))),
        ...answerOf("GET /v1/credits/purchases", await res(l.http("GET", "/v1/credits/purchases", writer))),
        ...answerOf("GET /v1/credits/fees", await res(l.http("GET", "/v1/credits/fees", writer))),
      ];
      const agent = { orgId: org, credential: "inference" as const };
      const opened = await res(l.http("POST", "/v1/runs", agent, { goal: "answers", budget_usd: 1, max_turns: 3, model_policy: { prefer: "cheap" } }));
      problems.push(...answerOf("POST /v1/runs", opened));
      const runId = (opened.body as { data?: { id?: string } }).data?.id ?? "run_missing";
      problems.push(
        ...answerOf("GET /v1/runs", await res(l.http("GET", "/v1/runs", agent))),
        ...answerOf("GET /v1/runs/:id", await res(l.http("GET", `/v1/runs/${runId}`, agent))),
        ...answerOf("POST /v1/runs/:id/close", await res(l.http("POST", `/v1/runs/${runId}/close`, agent, { status: "cancelled" }))),
      );
      expect(problems).toEqual([]);
    } finally {
      await l.close();
    }
  });

  it("alerts' match their descriptions", async () => {
    const h = await startAlertsHarness("mgmtanswers_alerts");
    try {
      const caller = { orgId: "org_answers" };
      const created = await h.call("POST", "/v1/alerts/channels", caller, { kind: "webhook", target: `${h.receiver.url}/hook/answers`, name: "ops" });
      const id = String(created.body.data?.id);
      const problems = [
        ...answerOf("POST /v1/alerts/channels", created),
        ...answerOf("GET /v1/alerts/channels", await h.call("GET", "/v1/alerts/channels", caller)),
        ...answerOf("POST /v1/alerts/channels/:id/test", await h.call("POST", `/v1/alerts/channels/${id}/test`, caller)),
        ...answerOf("GET /v1/alerts/deliveries", await h.call("GET", "/v1/alerts/deliveries", caller)),
        ...answerOf("DELETE /v1/alerts/channels/:id", await h.call("DELETE", `/v1/alerts/channels/${id}`, caller)),
      ];
      expect(problems).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it("broadcast's match their descriptions", async () => {
    const h = await startBroadcastHarness("mgmtanswers_broadcast", clock());
    try {
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await h.call(method, path, "org_answers", body);
        return { status: r.status, body: r.json as unknown };
      };
      const created = await call("POST", "/v1/broadcast/destinations", { kind: "webhook", url: `${h.receiver.url}/answers`, name: "Audit" });
      const id = String((created.body as { data?: { id?: string } }).data?.id);
      const problems = [
        ...answerOf("POST /v1/broadcast/destinations", created),
        ...answerOf("POST /v1/broadcast/destinations", await call("POST", "/v1/broadcast/destinations", { kind: "otlp", url: `${h.receiver.url}/v1/traces`, header_name: "x-api-key", header_value: "secret-value-1" })),
        ...answerOf("PATCH /v1/broadcast/destinations/:id", await call("PATCH", `/v1/broadcast/destinations/${id}`, { sample_rate: 0.5 })),
        ...answerOf("POST /v1/broadcast/destinations/:id/test", await call("POST", `/v1/broadcast/destinations/${id}/test`)),
        ...answerOf("GET /v1/broadcast/destinations", await call("GET", "/v1/broadcast/destinations")),
        ...answerOf("DELETE /v1/broadcast/destinations/:id", await call("DELETE", `/v1/broadcast/destinations/${id}`)),
      ];
      expect(problems).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it("runaway's and reports' match their descriptions", async () => {
    const c = clock();
    const r = await startRunawayHarness("mgmtanswers_runaway", c);
    const reportsHarness = await startReportsHarness("mgmtanswers_reports", c);
    try {
      const org = "org_answers";
      await r.db.query(
        `INSERT INTO flags (id, org_id, subject_kind, subject, key_hash, key_name, action, kind, window_start, window_end,
           spend_nanodollars, usual_spend_nanodollars, requests, usual_requests, created_at, published_at)
         VALUES ('flag_answers', $1, 'key', 'abcdefabcdef', $2, 'ci', 'paused', 'spend', $3, $3, 5000000000, 1000000000, 30, 4, $3, $3)`,
        [org, "a".repeat(64), c.now()],
      );
      const ws = { id: "ws_answers1", name: "Client One" };
      const as = { orgId: org, orgName: "Answers Ltd", workspace: ws };
      const problems = [
        ...answerOf("PUT /v1/alerts/settings", await r.put("/v1/alerts/settings", org, { runaway_action: "pause" })),
        ...answerOf("GET /v1/alerts/settings", await r.get("/v1/alerts/settings", org)),
        // Runaway's own list: the gateway adds `key_paused` to each row (the described answer).
        ...answerOf("GET /v1/alerts/runaway", await r.get("/v1/alerts/runaway", org), z.object({ data: z.array(runaway.runawayFlag), next_cursor: z.null() })),
        ...answerOf("PUT /v1/reports/branding", await reportsHarness.call("PUT", "/v1/reports/branding", as, { brand_name: "Acme", brand_footer: "Thanks" })),
        ...answerOf("GET /v1/reports/branding", await reportsHarness.call("GET", "/v1/reports/branding", as)),
        ...answerOf("GET /v1/reports/workspaces/:id", await reportsHarness.call("GET", `/v1/reports/workspaces/${ws.id}?month=2026-11`, as)),
      ];
      expect(problems).toEqual([]);
    } finally {
      await reportsHarness.close();
      await r.close();
    }
  });
});

describe("the gateway's own answers", () => {
  it("match their descriptions, field for field", async () => {
    const h = await startGatewayHarness("mgmtanswers_gateway");
    try {
      const org = await newOrganisation(h, "Answers Ltd");
      const key = org.managementKey;
      const call = (method: string, path: string, body?: unknown, opts: { key?: string; headers?: Record<string, string> } = { key }) =>
        gatewayCall(h.url, method, path, { ...opts, body });
      // A budget on the organisation's workspace, so that a row's budgets are not all empty.
      h.ledger.workspaces.set(org.workspaceId, {
        spendThisMonthNanodollars: 1_500_000_000n,
        budgets: [{ window: ledgerProto.Window.WINDOW_MONTHLY, limitNanodollars: 20_000_000_000n, includeByok: true }],
      });

      const created = await call("POST", "/v1/keys", { name: "answers", limit: 5, limit_reset: "monthly" });
      const inference = (created.body as { data: { key: string; hash: string } }).data;
      const workspace = await call("POST", "/v1/workspaces", { name: "Client Two" });
      const workspaceId = (workspace.body as { data: { id: string } }).data.id;
      const credential = await call("POST", "/v1/provider-keys", { provider: "openai", api_key: "sk-answers-0123456789" });
      const credentialId = (credential.body as { data: { id: string } }).data.id;
      const invitation = await call("POST", "/v1/organization/invitations", { role: "member" });
      const { id: invitationId, url } = (invitation.body as { data: { id: string; url: string } }).data;
      const exchanged = await call("POST", "/v1/auth/exchange", { key });
      const cookie = exchanged.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
      const verifier = "v".repeat(43);
      const pkce = `callback_url=${encodeURIComponent("https://app.example/cb")}&code_challenge=${s256Challenge(verifier)}&code_challenge_method=S256`;
      const approved = await call("POST", "/v1/auth/pkce/approve", {
        callback_url: "https://app.example/cb",
        code_challenge: s256Challenge(verifier),
        code_challenge_method: "S256",
      });
      const code = (approved.body as { data: { code: string } }).data.code;

      const problems = [
        ...answerOf("GET /v1/organization", await call("GET", "/v1/organization")),
        ...answerOf("PATCH /v1/organization", await call("PATCH", "/v1/organization", { name: "Answers Limited" })),
        ...answerOf("POST /v1/workspaces", workspace),
        ...answerOf("GET /v1/workspaces", await call("GET", "/v1/workspaces")),
        ...answerOf("PATCH /v1/workspaces/:id", await call("PATCH", `/v1/workspaces/${workspaceId}`, { name: "Client 2" })),
        ...answerOf("DELETE /v1/workspaces/:id", await call("DELETE", `/v1/workspaces/${workspaceId}`)),
        ...answerOf("POST /v1/keys", created),
        ...answerOf("GET /v1/keys", await call("GET", "/v1/keys")),
        ...answerOf("GET /v1/key", await call("GET", "/v1/key", undefined, { key: inference.key })),
        ...answerOf("PATCH /v1/keys/:hash", await call("PATCH", `/v1/keys/${inference.hash}`, { paused: true })),
        ...answerOf("DELETE /v1/keys/:hash", await call("DELETE", `/v1/keys/${inference.hash}`)),
        ...answerOf("POST /v1/provider-keys", credential),
        ...answerOf("GET /v1/provider-keys", await call("GET", "/v1/provider-keys")),
        ...answerOf("PATCH /v1/provider-keys/:id", await call("PATCH", `/v1/provider-keys/${credentialId}`, { disabled: true })),
        ...answerOf("DELETE /v1/provider-keys/:id", await call("DELETE", `/v1/provider-keys/${credentialId}`)),
        ...answerOf("GET /v1/organization/members", await call("GET", "/v1/organization/members")),
        ...answerOf("POST /v1/organization/invitations", invitation),
        ...answerOf("GET /v1/organization/invitations", await call("GET", "/v1/organization/invitations")),
        ...answerOf("POST /v1/invitations/lookup", await call("POST", "/v1/invitations/lookup", { token: url.split("#token=")[1] }, {})),
        ...answerOf("DELETE /v1/organization/invitations/:id", await call("DELETE", `/v1/organization/invitations/${invitationId}`)),
        ...answerOf("POST /v1/auth/exchange", exchanged),
        ...answerOf("GET /v1/auth/session", await call("GET", "/v1/auth/session", undefined, { headers: { cookie } })),
        ...answerOf("GET /v1/auth/organizations", await call("GET", "/v1/auth/organizations")),
        ...answerOf("POST /v1/auth/switch", await call("POST", "/v1/auth/switch", { org_id: org.orgId })),
        ...answerOf("POST /v1/auth/signout", await call("POST", "/v1/auth/signout", undefined, {})),
        ...answerOf("GET /v1/auth/methods", await call("GET", "/v1/auth/methods", undefined, {})),
        ...answerOf("GET /v1/auth/pkce", await call("GET", `/v1/auth/pkce?${pkce}`, undefined, {})),
        ...answerOf("POST /v1/auth/pkce/approve", approved),
        ...answerOf("POST /v1/auth/keys", await call("POST", "/v1/auth/keys", { code, code_verifier: verifier }, {})),
      ];
      expect(problems).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
