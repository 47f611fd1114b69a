import type { IncomingEvent } from "@router/bus";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { waitFor } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC, rollupBatchHandler } from "../src/app";
import { startReportsHarness, type ReportsHarness } from "./reports-harness";
import { completedEvent, encodeEvent, generationId } from "./report-events";

let h: ReportsHarness;
const clock = new ManualClock(new Date("2026-12-15T12:00:00.000Z"));

const at = (iso: string) => BigInt(Date.parse(iso));

/** The report of `ws` for `month` as the gateway would ask for it (the workspace named in the identity). */
async function report(ws: string, month: string, orgId = "org_roll") {
  const res = await h.call("GET", `/v1/reports/workspaces/${ws}?month=${month}`, { orgId, workspace: { id: ws, name: `Now ${ws}` } });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Publishes a marker event after others of the same organisation and waits for it: events with one key arrive in order. */
async function settled(orgId = "org_roll", ws = "ws_marker"): Promise<void> {
  const marker = completedEvent({ orgId, workspaceId: ws, createdAtMs: at("2026-12-01T00:00:00.000Z") });
  await h.publish(marker);
  await waitFor(
    async () => (await h.db.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [marker.requestId])).rowCount > 0,
    { what: "the marker request counted" },
  );
}

beforeAll(async () => {
  h = await startReportsHarness("reportsroll", clock, { retryDelayMs: 5 });
});

afterAll(async () => {
  await h.close();
});

describe("monthly rollups from router.request.completed.v1", () => {
  it("adds up list-price spend, requests and tokens by model, by agent and by UTC day, to the nanodollar", async () => {
    const ws = "ws_sums";
    const events = [
      completedEvent({ orgId: "org_roll", workspaceId: ws, servedModel: "openai/gpt-4o", agent: "planner", listCostNanodollars: 1_234_567_891n, createdAtMs: at("2026-11-03T10:00:00.000Z"), usage: { promptTokens: 100, completionTokens: 50, cachedTokens: 20, reasoningTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 } }),
      completedEvent({ orgId: "org_roll", workspaceId: ws, servedModel: "openai/gpt-4o", agent: "writer", listCostNanodollars: 3n, createdAtMs: at("2026-11-03T23:59:59.999Z"), usage: { promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 } }),
      completedEvent({ orgId: "org_roll", workspaceId: ws, servedModel: "anthropic/claude-3.5-haiku", agent: "planner", listCostNanodollars: 987_654_321n, createdAtMs: at("2026-11-04T00:00:00.000Z"), usage: { promptTokens: 7, completionTokens: 9, cachedTokens: 0, reasoningTokens: 4, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 } }),
      completedEvent({ orgId: "org_roll", workspaceId: ws, servedModel: "anthropic/claude-3.5-haiku", agent: "", listCostNanodollars: 10n, createdAtMs: at("2026-11-30T23:00:00.000Z"), usage: { promptTokens: 3, completionTokens: 3, cachedTokens: 1, reasoningTokens: 1, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 } }),
    ];
    for (const e of events) await h.publish(e);
    await settled();

    const r = await report(ws, "2026-11");

    expect(r.totals).toMatchObject({
      requests: 4,
      prompt_tokens: 111,
      completion_tokens: 64,
      cached_tokens: 21,
      reasoning_tokens: 5,
      total_tokens: 175,
      spend_nanodollars: "2222222225",
      spend: 2.222222225,
      requests_by_status: { complete: 4, error: 0, refused: 0, cancelled: 0 },
    });
    expect(r.by_model.map((l: any) => [l.model, l.requests, l.spend_nanodollars])).toEqual([
      ["openai/gpt-4o", 2, "1234567894"],
      ["anthropic/claude-3.5-haiku", 2, "987654331"],
    ]);
    expect(r.by_agent.map((l: any) => [l.agent, l.requests, l.spend_nanodollars, l.prompt_tokens])).toEqual([
      ["planner", 2, "2222222212", 107],
      [null, 1, "10", 3],
      ["writer", 1, "3", 1],
    ]);
    const days = Object.fromEntries(r.by_day.filter((d: any) => d.requests > 0).map((d: any) => [d.date, d.spend_nanodollars]));
    expect(days).toEqual({ "2026-11-03": "1234567894", "2026-11-04": "987654321", "2026-11-30": "10" });
    expect(r.by_day).toHaveLength(30);
  });

  it("counts a request once however often its event is delivered, under the same id or a new one", async () => {
    const ws = "ws_replay";
    const event = completedEvent({ orgId: "org_roll", workspaceId: ws, listCostNanodollars: 777n, createdAtMs: at("2026-11-10T08:00:00.000Z") });
    await h.publish(event, "evt-replay-1");
    await settled();
    const before = await report(ws, "2026-11");

    await h.publish(event, "evt-replay-1");
    await h.publish(event, "evt-replay-under-another-id");
    await settled();

    const after = await report(ws, "2026-11");
    expect(after.totals).toEqual(before.totals);
    expect(after.by_model).toEqual(before.by_model);
    expect(after.totals).toMatchObject({ requests: 1, spend_nanodollars: "777" });
  });

  it("puts a request in the UTC month and day of its creation, whatever the clock says when it arrives", async () => {
    const ws = "ws_bounds";
    // Received after the month turned: still October's.
    clock.set(new Date("2026-11-01T00:00:05.000Z"));
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: ws, listCostNanodollars: 100n, createdAtMs: at("2026-10-31T23:59:59.999Z") }));
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: ws, listCostNanodollars: 200n, createdAtMs: at("2026-11-01T00:00:00.000Z") }));
    // 23:30 on 31 October in New York is already November in UTC.
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: ws, listCostNanodollars: 400n, createdAtMs: at("2026-11-01T03:30:00.000Z") }));
    await settled();
    clock.set(new Date("2026-12-15T12:00:00.000Z"));

    const october = await report(ws, "2026-10");
    const november = await report(ws, "2026-11");
    expect(october.totals).toMatchObject({ requests: 1, spend_nanodollars: "100" });
    expect(october.by_day.at(-1)).toMatchObject({ date: "2026-10-31", requests: 1, spend_nanodollars: "100" });
    expect(november.totals).toMatchObject({ requests: 2, spend_nanodollars: "600" });
    expect(november.by_day[0]).toMatchObject({ date: "2026-11-01", requests: 2, spend_nanodollars: "600" });
  });

  it("counts every status as a request and adds the list cost each carries; a refusal carries none", async () => {
    const ws = "ws_statuses";
    const base = { orgId: "org_roll", workspaceId: ws, createdAtMs: at("2026-11-12T12:00:00.000Z") };
    await h.publish(completedEvent({ ...base, listCostNanodollars: 1_000n }));
    await h.publish(completedEvent({ ...base, status: "refused", servedModel: "", listCostNanodollars: 0n, usage: undefined }));
    await h.publish(completedEvent({ ...base, status: "error", servedModel: "", listCostNanodollars: 0n, usage: undefined }));
    // A stream the client abandoned: the tokens it used were paid for and counted by the ledger.
    await h.publish(completedEvent({ ...base, status: "cancelled", listCostNanodollars: 250n }));
    await settled();

    const r = await report(ws, "2026-11");
    expect(r.totals).toMatchObject({
      requests: 4,
      spend_nanodollars: "1250",
      requests_by_status: { complete: 1, error: 1, refused: 1, cancelled: 1 },
    });
    expect(r.by_model).toEqual([
      expect.objectContaining({ model: "openai/gpt-4o-mini", requests: 2, spend_nanodollars: "1250" }),
      expect.objectContaining({ model: null, requests: 2, spend_nanodollars: "0" }),
    ]);
  });

  it("keeps each organisation's and each workspace's months apart", async () => {
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: "ws_mine", listCostNanodollars: 5n, createdAtMs: at("2026-11-05T00:00:00.000Z") }));
    await h.publish(completedEvent({ orgId: "org_other", workspaceId: "ws_mine", listCostNanodollars: 50n, createdAtMs: at("2026-11-05T00:00:00.000Z") }));
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: "ws_theirs", listCostNanodollars: 500n, createdAtMs: at("2026-11-05T00:00:00.000Z") }));
    await settled();
    await settled("org_other");

    expect((await report("ws_mine", "2026-11")).totals.spend_nanodollars).toBe("5");
    expect((await report("ws_mine", "2026-11", "org_other")).totals.spend_nanodollars).toBe("50");
  });

  it("skips a request whose key has no workspace: no client report can show it", async () => {
    const event = completedEvent({ orgId: "org_roll", workspaceId: "", workspaceName: "" });
    await h.publish(event);
    await settled();
    const counted = await h.db.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [event.requestId]);
    expect(counted.rowCount).toBe(0);
    const metrics = await h.service.metrics.registry.getSingleMetricAsString("reports_events_counted_total");
    expect(metrics).toMatch(/result="no_workspace",service="reports"} 1$/m);
  });

  it("dead-letters a payload it cannot decode, or one without a request id, after the bus's retries", async () => {
    const deadLettered: IncomingEvent[] = [];
    const dlq = await h.bus.subscribe({
      topic: `${REQUEST_COMPLETED_TOPIC}.dlq`,
      group: "reports-test-dlq",
      handler: async (e) => {
        deadLettered.push(e);
      },
    });

    await h.publish(new Uint8Array([0xff, 0xff, 0xff]), "evt-poison");
    await h.publish(completedEvent({ requestId: "", orgId: "org_roll", workspaceId: "ws_poison" }), "evt-no-id");

    await waitFor(() => deadLettered.some((e) => e.id === "evt-poison") && deadLettered.some((e) => e.id === "evt-no-id"), {
      what: "both dead letters",
    });
    await dlq.close();
    expect((await h.db.query("SELECT 1 FROM rollups WHERE workspace_id = 'ws_poison'")).rowCount).toBe(0);
  });

  it("keeps the name the workspace carried on its latest request of the month beside its current name", async () => {
    const ws = "ws_renamed";
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: ws, workspaceName: "Old Name", createdAtMs: at("2026-11-02T00:00:00.000Z") }));
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: ws, workspaceName: "Middle Name", createdAtMs: at("2026-11-20T00:00:00.000Z") }));
    // Arrives last but was made earlier: it does not overwrite the later name.
    await h.publish(completedEvent({ orgId: "org_roll", workspaceId: ws, workspaceName: "Oldest Name", requestId: generationId(), createdAtMs: at("2026-11-01T00:00:00.000Z") }));
    await settled();

    const r = await report(ws, "2026-11");
    expect(r.workspace).toEqual({ id: ws, name: `Now ${ws}`, name_in_month: "Middle Name" });
    expect((await report(ws, "2026-10")).workspace.name_in_month).toBeNull();
  });
});

describe("a batch of deliveries (the Redis adapter hands several over at once)", () => {
  it("counts each request of the batch once, a request twice in one batch included", async () => {
    const handle = rollupBatchHandler({ db: h.db, log: createLogger({ level: "silent" }), clock });
    const ws = "ws_batch";
    const twice = completedEvent({ orgId: "org_roll", workspaceId: ws, listCostNanodollars: 11n, createdAtMs: at("2026-11-07T00:00:00.000Z") });
    const once = completedEvent({ orgId: "org_roll", workspaceId: ws, listCostNanodollars: 100n, createdAtMs: at("2026-11-08T00:00:00.000Z") });
    const delivery = (e: typeof once, id: string): IncomingEvent => ({
      id,
      topic: REQUEST_COMPLETED_TOPIC,
      key: e.orgId,
      type: REQUEST_COMPLETED_TOPIC,
      payload: encodeEvent(e),
      headers: {},
      attempt: 1,
    });

    await handle([delivery(twice, "b1"), delivery(once, "b2"), delivery(twice, "b3")]);
    await handle([delivery(twice, "b1")]);

    const r = await report(ws, "2026-11");
    expect(r.totals).toMatchObject({ requests: 2, spend_nanodollars: "111" });
    expect(r.by_day.filter((d: any) => d.requests > 0).map((d: any) => [d.date, d.requests])).toEqual([
      ["2026-11-07", 1],
      ["2026-11-08", 1],
    ]);
  });
});
