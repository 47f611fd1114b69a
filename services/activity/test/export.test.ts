import type { Identity } from "@router/http-kit";
import { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { recordRequests } from "../src/recording/request-record";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, identityHeader, refusedEvent } from "./request-events";

const NOW = new Date("2026-11-21T10:00:00.000Z");
const MAX_ROWS = 2000;
const HEADER =
  "created_at,request_id,client,key,requested_model,served_model,provider,status,error_code,byok,prompt_tokens,completion_tokens,billed_usd,list_price_usd,agent";

const at = (iso: string): bigint => BigInt(Date.parse(iso));

/** `count` requests of one organisation, a minute apart from `startIso`, ids sortable by time. */
function many(orgId: string, count: number, startIso: string): events.RequestCompleted[] {
  const start = Date.parse(startIso);
  return Array.from({ length: count }, (_, i) =>
    completedEvent({ requestId: `gen-${orgId}-${String(i).padStart(5, "0")}`, orgId, createdAtMs: BigInt(start + i * 60_000), attempts: [] }),
  );
}

// The same behaviour from both ways of reading: a Postgres cursor, and keyset pages (embedded PGlite).
describe.each([
  ["through a Postgres cursor", false],
  ["in keyset pages, as on embedded PGlite", true],
])("GET /v1/activity/export %s", (_how, withoutCursor) => {
  const clock = new ManualClock(NOW);
  let activity: ActivityHarness;

  async function exportCsv(query: string, orgId: string, more: Partial<Identity> = {}) {
    const res = await fetch(`${activity.base}/v1/activity/export${query}`, { headers: await identityHeader(orgId, "management", more) });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  const lines = (text: string) => text.split("\n").filter((l) => l !== "");

  beforeAll(async () => {
    activity = await startActivityHarness(withoutCursor ? "activityexpk" : "activityexpc", clock, {}, { exportMaxRows: MAX_ROWS, withoutCursor });
    const seed = async (list: events.RequestCompleted[]) => {
      for (let i = 0; i < list.length; i += 500) await recordRequests(activity.db, list.slice(i, i + 500), clock.now());
    };
    await seed([
      completedEvent({
        requestId: "gen-row",
        orgId: "org_csv",
        createdAtMs: at("2026-11-05T09:00:00.000Z"),
        billedCostNanodollars: 4_500n,
        listCostNanodollars: 2_250n,
      }),
      refusedEvent({ requestId: "gen-refused", orgId: "org_csv", createdAtMs: at("2026-11-05T10:00:00.000Z"), isByok: false, agent: "" }),
      completedEvent({ requestId: "gen-first-instant", orgId: "org_csv", createdAtMs: at("2026-11-01T00:00:00.000Z") }),
      completedEvent({ requestId: "gen-last-instant", orgId: "org_csv", createdAtMs: at("2026-11-30T23:59:59.999Z") }),
      completedEvent({ requestId: "gen-next-month", orgId: "org_csv", createdAtMs: at("2026-12-01T00:00:00.000Z") }),
      completedEvent({ requestId: "gen-october", orgId: "org_csv", createdAtMs: at("2026-10-31T23:59:59.999Z") }),
      completedEvent({ requestId: "gen-theirs", orgId: "org_csv_other", createdAtMs: at("2026-11-06T00:00:00.000Z") }),
      // Cells a spreadsheet would run as formulas.
      completedEvent({
        requestId: "gen-formula",
        orgId: "org_formula",
        createdAtMs: at("2026-11-07T00:00:00.000Z"),
        workspaceName: "=HYPERLINK(\"https://evil.example\",\"x\")",
        keyName: "@SUM(A1:A9)",
        requestedModel: "+cmd|' /C calc'!A0",
        errorCode: "-2+3",
        agent: "\tagent",
        servedModel: "\rmodel",
      }),
      // One workspace's rows, one of them recorded before events carried the workspace name.
      completedEvent({ requestId: "gen-ws-named", orgId: "org_ws", workspaceId: "ws_acme", workspaceName: "Acme at the time", createdAtMs: at("2026-11-02T00:00:00.000Z") }),
      completedEvent({ requestId: "gen-ws-older", orgId: "org_ws", workspaceId: "ws_acme", workspaceName: "", createdAtMs: at("2026-11-03T00:00:00.000Z") }),
      completedEvent({ requestId: "gen-ws-elsewhere", orgId: "org_ws", workspaceId: "ws_other", workspaceName: "", createdAtMs: at("2026-11-04T00:00:00.000Z") }),
      ...many("org_big", MAX_ROWS + 3, "2026-11-01T00:00:00.000Z"),
      ...many("org_full", MAX_ROWS, "2026-11-01T00:00:00.000Z"),
    ]);
  });

  afterAll(async () => {
    await activity.close();
  });

  test("writes the documented columns in order, then one row per request of the month, oldest first", async () => {
    const res = await exportCsv("?month=2026-11", "org_csv");

    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="activity-2026-11.csv"');
    expect(lines(res.text)).toEqual([
      HEADER,
      "2026-11-01T00:00:00.000Z,gen-first-instant,Client One,ci key,openai/gpt-4o-mini,openai/gpt-4o-mini,openai,complete,,true,10,5,0,0.00000225,planner",
      "2026-11-05T09:00:00.000Z,gen-row,Client One,ci key,openai/gpt-4o-mini,openai/gpt-4o-mini,openai,complete,,true,10,5,0.0000045,0.00000225,planner",
      "2026-11-05T10:00:00.000Z,gen-refused,Client One,ci key,openai/gpt-4o-mini,,,refused,budget_exceeded,false,0,0,0,0,",
      "2026-11-30T23:59:59.999Z,gen-last-instant,Client One,ci key,openai/gpt-4o-mini,openai/gpt-4o-mini,openai,complete,,true,10,5,0,0.00000225,planner",
    ]);
  });

  test("exports the current month when no month is given", async () => {
    const res = await exportCsv("", "org_csv");

    expect(res.headers.get("content-disposition")).toContain("activity-2026-11.csv");
    expect(lines(res.text)).toHaveLength(5);
  });

  test("gives only the header for a past month without requests", async () => {
    const res = await exportCsv("?month=2025-02", "org_csv");

    expect(res.status).toBe(200);
    expect(res.text).toBe(`${HEADER}\n`);
  });

  test("prefixes text cells a spreadsheet would run as a formula with a single quote", async () => {
    const res = await exportCsv("?month=2026-11", "org_formula");

    const row = lines(res.text)[1] ?? "";
    expect(row).toContain(`,"'=HYPERLINK(""https://evil.example"",""x"")",`);
    expect(row).toContain(",'@SUM(A1:A9),");
    expect(row).toContain(",'+cmd|' /C calc'!A0,");
    expect(row).toContain(",'-2+3,");
    expect(row).toContain(",'\tagent");
    expect(row).toContain(`'\rmodel`);
    // Numbers are not text: token counts and amounts stay as they are.
    expect(row).toContain(",true,10,5,0,0.00000225,");
  });

  test("narrows to one workspace, naming the client of older rows after the workspace the export names", async () => {
    const res = await exportCsv("?month=2026-11&workspace=ws_acme", "org_ws", { workspace: { id: "ws_acme", name: "Acme now" } });

    expect(res.headers.get("content-disposition")).toBe('attachment; filename="activity-2026-11-ws_acme.csv"');
    expect(lines(res.text).slice(1).map((l) => l.split(",").slice(1, 3))).toEqual([
      ["gen-ws-named", "Acme at the time"],
      ["gen-ws-older", "Acme now"],
    ]);
  });

  test("leaves the client empty for a row that predates workspace names when the export names no workspace", async () => {
    const res = await exportCsv("?month=2026-11", "org_ws");

    expect(lines(res.text).slice(1).map((l) => l.split(",").slice(1, 3))).toEqual([
      ["gen-ws-named", "Acme at the time"],
      ["gen-ws-older", ""],
      ["gen-ws-elsewhere", ""],
    ]);
  });

  test("stops at the row limit with a closing # truncated line", async () => {
    const res = await exportCsv("?month=2026-11", "org_big");

    const all = lines(res.text);
    expect(all).toHaveLength(1 + MAX_ROWS + 1);
    expect(all[1]).toContain("gen-org_big-00000");
    expect(all[MAX_ROWS]).toContain(`gen-org_big-${String(MAX_ROWS - 1).padStart(5, "0")}`);
    expect(all[MAX_ROWS + 1]).toMatch(/^# truncated/);
  });

  test("adds no # truncated line when the month has exactly the row limit", async () => {
    const res = await exportCsv("?month=2026-11", "org_full");

    const all = lines(res.text);
    expect(all).toHaveLength(1 + MAX_ROWS);
    expect(res.text).not.toContain("# truncated");
    expect(new Set(all.slice(1).map((l) => l.split(",")[1])).size).toBe(MAX_ROWS);
  });

  test("never exports another organisation's requests", async () => {
    const res = await exportCsv("?month=2026-11", "org_csv_other");

    expect(lines(res.text).slice(1).map((l) => l.split(",")[1])).toEqual(["gen-theirs"]);
  });

  test.each([
    ["month=2026-13", "month"],
    ["month=2026-1", "month"],
    ["month=11-2026", "month"],
    ["month=2026-11-01", "month"],
    ["month=0099-01", "month"],
    ["month=november", "month"],
    ["workspace=acme", "workspace"],
  ])("answers %s with 400 naming %s", async (query, field) => {
    const res = await exportCsv(`?${query}`, "org_csv");

    expect(res.status).toBe(400);
    expect((JSON.parse(res.text) as { error: { details: { field: string } } }).error.details.field).toBe(field);
  });

  test.each([
    ["owner", 200],
    ["admin", 200],
    ["billing", 200],
    ["member", 403],
    ["readonly", 403],
  ] as const)("answers the %s role with %s", async (role, status) => {
    const res = await exportCsv("?month=2026-11", "org_csv", { role });

    expect(res.status).toBe(status);
  });

  test("refuses an inference key with 403", async () => {
    const res = await fetch(`${activity.base}/v1/activity/export`, { headers: await identityHeader("org_csv", "inference") });

    expect(res.status).toBe(403);
  });
});
