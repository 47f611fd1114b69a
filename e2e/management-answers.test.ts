import { managementRoute } from "@router/management-api";
import { newIdentityKeys } from "@router/testkit";
import { z } from "zod";
import { fixtureCatalog } from "../services/routing/test/catalog-fixture";
import { managementIdentity, signedCall, startHarness, type Harness } from "../services/routing/test/routing-harness";

/*
 * The answer schemas of the descriptions against what an owner really answers: routing's routes are
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

/** What is wrong with `body` as the answer of `key`: schema issues, then fields it does not describe. */
function answerProblems(key: string, body: unknown): string[] {
  const answer = managementRoute(key)?.answer;
  if (!answer || answer === "csv") return [`${key}: no JSON answer described`];
  const parsed = answer.safeParse(body);
  if (!parsed.success) return parsed.error.issues.map((i) => `${key} ${i.path.join(".")}: ${i.message}`);
  return undocumented(z.toJSONSchema(answer, { io: "output", unrepresentable: "any" }) as JsonSchema, body, key, []);
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
