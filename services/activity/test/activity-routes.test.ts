import { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { recordRequests } from "../src/recording/request-record";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, identityHeader, refusedEvent } from "./request-events";

const NOW = new Date("2026-11-21T10:00:00.000Z");
const clock = new ManualClock(NOW);
let activity: ActivityHarness;

function minutesAgo(n: number): bigint {
  return BigInt(NOW.getTime() - n * 60_000);
}

async function seed(...list: events.RequestCompleted[]): Promise<void> {
  for (const e of list) await recordRequests(activity.db, [e], clock.now());
}

async function get(path: string, orgId = "org_alpha", credential: "management" | "session" | "inference" = "management") {
  const res = await fetch(`${activity.base}${path}`, { headers: await identityHeader(orgId, credential) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  activity = await startActivityHarness("activityhttp", clock);
});

afterAll(async () => {
  await activity.close();
});

describe("GET /v1/activity", () => {
  const org = "org_paging";
  const ids = ["gen-p1", "gen-p2", "gen-p3", "gen-p4", "gen-p5", "gen-p6", "gen-p7"];

  beforeAll(async () => {
    // gen-p3 and gen-p4 share a timestamp so the id breaks the tie across a page boundary.
    const ages = [70, 60, 50, 50, 30, 20, 10];
    await seed(...ids.map((id, i) => completedEvent({ requestId: id, orgId: org, createdAtMs: minutesAgo(ages[i]!) })));
  });

  test("pages newest first with next_cursor until the list ends", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/v1/activity?limit=3${cursor ? `&cursor=${cursor}` : ""}`, org);
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as { id: string }[]).map((r) => r.id));
      cursor = res.body.next_cursor as string | null;
      pages += 1;
    } while (cursor !== null && pages < 10);

    expect(pages).toBe(3);
    expect(seen).toEqual(["gen-p7", "gen-p6", "gen-p5", "gen-p4", "gen-p3", "gen-p2", "gen-p1"]);
  });

  test("returns next_cursor null when everything fits on one page", async () => {
    const res = await get("/v1/activity", org);

    expect(res.body.data).toHaveLength(7);
    expect(res.body.next_cursor).toBeNull();
  });

  test("renders exactly the request-record fields, with total_cost in USD from the billed amount", async () => {
    const event = completedEvent({ orgId: "org_render", billedCostNanodollars: 1_500_000n, listCostNanodollars: 9_000_000n, ingress: "responses" });
    await seed(event);

    const res = await get("/v1/activity", "org_render");

    expect(res.body.data).toEqual([
      {
        id: event.requestId,
        created_at: "2026-11-21T09:00:00.000Z",
        requested_model: "openai/gpt-4o-mini",
        served_model: "openai/gpt-4o-mini",
        provider_slug: "openai",
        status: "complete",
        finish_reason: "stop",
        native_finish_reason: "stop",
        is_byok: true,
        is_cache_hit: false,
        cancelled: false,
        streamed: false,
        quantization: null,
        ttft_ms: 120,
        generation_ms: 480,
        routing_overhead_ms: 6,
        error_code: null,
        error_message: null,
        total_cost: 0.0015,
        // What the provider charged at list price, and Router's fee (the billed amount), apart.
        list_cost: 0.009,
        fee: 0.0015,
        app_id: "app_console",
        app_title: "Console",
        http_referer: "https://console.example.com",
        workspace_id: "ws_client1",
        agent: "planner",
        ingress: "responses",
      },
    ]);
  });

  test("renders a budget refusal with nothing routed as nulls and zero cost", async () => {
    const event = refusedEvent({ orgId: "org_refused" });
    await seed(event);

    const res = await get("/v1/activity", "org_refused");

    expect(res.body.data[0]).toMatchObject({
      id: event.requestId,
      status: "refused",
      error_code: "budget_exceeded",
      served_model: null,
      provider_slug: null,
      finish_reason: null,
      ttft_ms: null,
      generation_ms: null,
      routing_overhead_ms: null,
      total_cost: 0,
    });
  });

  test("refuses an inference key with 403 permission_denied", async () => {
    const res = await get("/v1/activity", org, "inference");

    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });

  test("serves a dashboard session", async () => {
    const res = await get("/v1/activity", org, "session");

    expect(res.status).toBe(200);
  });

  test("refuses a request without the gateway-signed identity", async () => {
    const res = await fetch(`${activity.base}/v1/activity`);

    expect(res.status).toBe(401);
  });

  test("refuses an identity signed with another secret", async () => {
    const forged = (await identityHeader(org))["x-router-identity"]!.replace(/\.[^.]+$/, ".AAAA");
    const res = await fetch(`${activity.base}/v1/activity`, { headers: { "x-router-identity": forged } });

    expect(res.status).toBe(401);
  });
});

describe("activity filters", () => {
  const org = "org_filters";
  const e = {
    old: completedEvent({ requestId: "gen-f-old", orgId: org, createdAtMs: minutesAgo(3 * 24 * 60) }),
    anthropic: completedEvent({
      requestId: "gen-f-anthropic",
      orgId: org,
      createdAtMs: minutesAgo(5),
      servedModel: "anthropic/claude-sonnet-4",
      providerSlug: "anthropic",
      workspaceId: "ws_other",
      agent: "reviewer",
      appId: "app_cli",
    }),
    platform: completedEvent({ requestId: "gen-f-platform", orgId: org, createdAtMs: minutesAgo(4), isByok: false }),
    failed: completedEvent({ requestId: "gen-f-failed", orgId: org, createdAtMs: minutesAgo(3), status: "error", errorCode: "upstream_error" }),
  };

  beforeAll(async () => {
    await seed(...Object.values(e));
  });

  async function idsFor(query: string): Promise<string[]> {
    const res = await get(`/v1/activity?${query}`, org);
    expect(res.status).toBe(200);
    return (res.body.data as { id: string }[]).map((r) => r.id).sort();
  }

  test.each([
    ["days=1", ["gen-f-anthropic", "gen-f-failed", "gen-f-platform"]],
    ["model=anthropic/claude-sonnet-4", ["gen-f-anthropic"]],
    ["provider=anthropic", ["gen-f-anthropic"]],
    ["workspace=ws_other", ["gen-f-anthropic"]],
    ["agent=reviewer", ["gen-f-anthropic"]],
    ["status=error", ["gen-f-failed"]],
    ["byok=false", ["gen-f-platform"]],
    ["byok=true&days=1", ["gen-f-anthropic", "gen-f-failed"]],
    ["app=app_cli", ["gen-f-anthropic"]],
    ["workspace=ws_unknown", []],
    ["model=&byok=", ["gen-f-anthropic", "gen-f-failed", "gen-f-old", "gen-f-platform"]],
  ])("filters by %s", async (query, expected) => {
    expect(await idsFor(query)).toEqual(expected);
  });

  test.each([
    ["workspace=not-a-workspace", "workspace"],
    ["workspace=ws_bad%20id", "workspace"],
    ["byok=yes", "byok"],
    ["limit=0", "limit"],
    ["limit=501", "limit"],
    ["limit=ten", "limit"],
    ["days=0", "days"],
    ["days=-1", "days"],
    ["cursor=not-a-cursor", "cursor"],
    [`cursor=${Buffer.from('["yesterday","gen-x"]').toString("base64url")}`, "cursor"],
    ["agent=-bad", "agent"],
    ["status=DROP%20TABLE", "status"],
    ["model=a&model=b", "model"],
  ])("answers %s with 400 naming %s", async (query, field) => {
    const res = await get(`/v1/activity?${query}`, org);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details.field).toBe(field);
  });
});

describe("organisation isolation", () => {
  const theirs = completedEvent({ requestId: "gen-iso-a", orgId: "org_a" });

  beforeAll(async () => {
    await seed(theirs, completedEvent({ requestId: "gen-iso-b", orgId: "org_b" }));
  });

  test("lists only the calling organisation's requests", async () => {
    const res = await get("/v1/activity", "org_b");

    expect((res.body.data as { id: string }[]).map((r) => r.id)).toEqual(["gen-iso-b"]);
  });

  test("answers 404 for another organisation's request id", async () => {
    const res = await get(`/v1/activity/requests/${theirs.requestId}`, "org_b");

    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });

  test("answers 404 for another organisation's generation", async () => {
    const res = await get(`/v1/generation?id=${theirs.requestId}`, "org_b", "inference");

    expect(res.status).toBe(404);
  });

  test("lists no upstream attempt of another organisation, even by request id", async () => {
    const res = await get(`/v1/activity/upstream?request=${theirs.requestId}`, "org_b");

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});

describe("GET /v1/activity/requests/{id}", () => {
  const event = completedEvent({
    orgId: "org_one",
    attempts: [
      {
        ...completedEvent().attempts[0]!,
        id: "att_one_2",
        attempt: 2,
        providerSlug: "azure",
        startedAtMs: BigInt(Date.parse("2026-11-21T09:00:00.400Z")),
      },
      {
        ...completedEvent().attempts[0]!,
        id: "att_one_1",
        attempt: 1,
        status: "error",
        httpStatus: 503,
        errorCode: "upstream_unavailable",
        errorMessage: "openai answered 503 upstream_unavailable",
        ttftMs: undefined,
        startedAtMs: BigInt(Date.parse("2026-11-21T09:00:00.005Z")),
      },
    ],
  });

  beforeAll(async () => {
    await seed(event);
  });

  test("returns the row plus key, session, run, usage lines and attempts in cascade order", async () => {
    const res = await get(`/v1/activity/requests/${event.requestId}`, "org_one");

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: event.requestId,
      served_model: "openai/gpt-4o-mini",
      key: { hash: "a".repeat(64), name: "ci key" },
      session_id: "sess-1",
      run_id: "run_abc",
      usage_lines: [
        { kind: "prompt", tokens: 10, price_per_million: 0.15, cost: 0.0000015, cost_nanodollars: "1500", price_version_id: 7 },
        { kind: "completion", tokens: 5, price_per_million: 0.6, cost: 0.000003, cost_nanodollars: "3000", price_version_id: 7 },
      ],
    });
    expect(res.body.data.attempts).toEqual([
      {
        id: "att_one_1",
        request_id: event.requestId,
        created_at: "2026-11-21T09:00:00.005Z",
        attempt: 1,
        model_id: "openai/gpt-4o-mini",
        provider_slug: "openai",
        endpoint_id: "ep_openai_gpt4omini",
        is_byok: true,
        status: "error",
        http_status: 503,
        error_code: "upstream_unavailable",
        error_message: "openai answered 503 upstream_unavailable",
        duration_ms: 470,
        ttft_ms: null,
      },
      expect.objectContaining({ id: "att_one_2", attempt: 2, status: "ok", provider_slug: "azure" }),
    ]);
  });

  test("answers 404 for an id that does not exist", async () => {
    const res = await get("/v1/activity/requests/gen-missing", "org_one");

    expect(res.status).toBe(404);
  });
});

describe("GET /v1/activity/upstream", () => {
  const org = "org_upstream";
  const failedOver = completedEvent({
    requestId: "gen-u-failover",
    orgId: org,
    createdAtMs: minutesAgo(10),
    attempts: [1, 2, 3].map((n) => ({
      ...completedEvent().attempts[0]!,
      id: `att_u_${n}`,
      attempt: n,
      providerSlug: n === 3 ? "azure" : "openai",
      status: n === 3 ? "ok" : "error",
      httpStatus: n === 3 ? 200 : 502,
      startedAtMs: minutesAgo(10) + BigInt(n * 100),
    })),
  });
  const single = completedEvent({
    requestId: "gen-u-single",
    orgId: org,
    createdAtMs: minutesAgo(2),
    attempts: [{ ...completedEvent().attempts[0]!, id: "att_u_single", startedAtMs: minutesAgo(2) }],
  });
  const old = completedEvent({
    requestId: "gen-u-old",
    orgId: org,
    createdAtMs: minutesAgo(5 * 24 * 60),
    attempts: [{ ...completedEvent().attempts[0]!, id: "att_u_old", startedAtMs: minutesAgo(5 * 24 * 60) }],
  });

  beforeAll(async () => {
    await seed(failedOver, single, old);
  });

  async function idsFor(query: string): Promise<string[]> {
    const res = await get(`/v1/activity/upstream?${query}`, org);
    expect(res.status).toBe(200);
    return (res.body.data as { id: string }[]).map((r) => r.id);
  }

  test("lists one row per dispatch, newest first, so a request that failed over twice appears three times", async () => {
    expect(await idsFor("")).toEqual(["att_u_single", "att_u_3", "att_u_2", "att_u_1", "att_u_old"]);
  });

  test("pages with next_cursor", async () => {
    const first = await get("/v1/activity/upstream?limit=2", org);
    const second = await get(`/v1/activity/upstream?limit=2&cursor=${first.body.next_cursor as string}`, org);

    expect((first.body.data as { id: string }[]).map((r) => r.id)).toEqual(["att_u_single", "att_u_3"]);
    expect((second.body.data as { id: string }[]).map((r) => r.id)).toEqual(["att_u_2", "att_u_1"]);
    expect(second.body.next_cursor).not.toBeNull();
  });

  test.each([
    ["request=gen-u-failover", ["att_u_3", "att_u_2", "att_u_1"]],
    ["provider=azure", ["att_u_3"]],
    ["status=error", ["att_u_2", "att_u_1"]],
    ["status=ok&days=1", ["att_u_single", "att_u_3"]],
  ])("filters by %s", async (query, expected) => {
    expect(await idsFor(query)).toEqual(expected);
  });

  test.each([
    ["status=failed", "status"],
    ["limit=1000", "limit"],
    ["days=x", "days"],
    ["cursor=%%%", "cursor"],
  ])("answers %s with 400 naming %s", async (query, field) => {
    const res = await get(`/v1/activity/upstream?${query}`, org);

    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });

  test("refuses an inference key with 403", async () => {
    const res = await get("/v1/activity/upstream", org, "inference");

    expect(res.status).toBe(403);
  });
});

describe("GET /v1/generation", () => {
  const event = completedEvent({
    orgId: "org_gen",
    providerName: "OpenAI",
    billedCostNanodollars: 4_500n,
    streamed: true,
    quantization: "fp8",
    droppedTools: ["web_search"],
    isCacheHit: true,
    usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 4, reasoningTokens: 0, cacheWrite5mTokens: 3, cacheWrite1hTokens: 2 },
  });

  beforeAll(async () => {
    await seed(event);
  });

  test("returns the generation record to an inference key of the same organisation", async () => {
    const res = await get(`/v1/generation?id=${event.requestId}`, "org_gen", "inference");

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: event.requestId,
      model: "openai/gpt-4o-mini",
      provider_name: "OpenAI",
      endpoint_id: "ep_openai_gpt4omini",
      quantization: "fp8",
      total_cost: 0.0000045,
      list_cost: 0.00000225,
      fee: 0.0000045,
      finish_reason: "stop",
      native_finish_reason: "stop",
      streamed: true,
      cancelled: false,
      is_byok: true,
      latency: 120,
      generation_time: 480,
      tokens_prompt: 10,
      tokens_completion: 5,
      tokens_cached: 4,
      tokens_cache_write_5m: 3,
      tokens_cache_write_1h: 2,
      is_cache_hit: true,
      price_version_ids: [7],
      usage_lines: [expect.objectContaining({ kind: "prompt" }), expect.objectContaining({ kind: "completion" })],
      app_id: "app_console",
      app_title: "Console",
      http_referer: "https://console.example.com",
      user_agent: "openai-node/6.0",
      dropped_tools: ["web_search"],
      created_at: "2026-11-21T09:00:00.000Z",
    });
  });

  test("names the provider by its slug on a record whose event carried no display name", async () => {
    const older = completedEvent({ orgId: "org_gen" });
    await seed(older);

    const res = await get(`/v1/generation?id=${older.requestId}`, "org_gen", "inference");

    expect(res.body.data.provider_name).toBe("openai");
  });

  test("shows the request's cache reads and writes on its detail", async () => {
    const res = await get(`/v1/activity/requests/${event.requestId}`, "org_gen");

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ is_cache_hit: true, cache_read_tokens: 4, cache_write_5m_tokens: 3, cache_write_1h_tokens: 2 });
  });

  test.each(["", "?id="])("answers 400 naming id for /v1/generation%s", async (query) => {
    const res = await get(`/v1/generation${query}`, "org_gen", "inference");

    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("id");
  });

  test("refuses a management key with 403", async () => {
    const res = await get(`/v1/generation?id=${event.requestId}`, "org_gen", "management");

    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });

  test("answers 404 for an unknown generation", async () => {
    const res = await get("/v1/generation?id=gen-nope", "org_gen", "inference");

    expect(res.status).toBe(404);
  });
});
