import { createPostgresDb, type Db } from "@router/db";
import { CallStreams, callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { ledger } from "@router/proto";
import { createTestDatabase, type TestDatabase, metricSample } from "@router/testkit";
import { startLedger, type RunningLedger } from "../src/app";
import { keyCeiling, requestId, USD } from "./ledger-fixture";

/** The value of the first sample named `name` whose labels include `labels`; 0 when there is none. */
let database: TestDatabase;
let db: Db;
let running: RunningLedger;
let client: ledger.LedgerServiceClient;

beforeAll(async () => {
  database = await createTestDatabase("ledgermetrics");
  db = createPostgresDb({ url: database.url, schema: "ledger" });
  running = await startLedger({
    db,
    log: createLogger({ level: "silent" }),
    clock: new ManualClock(new Date("2026-11-18T10:00:00.000Z")),
    grpcPort: 0,
    metricsPort: 0,
  });
  client = new ledger.LedgerServiceClient(`127.0.0.1:${running.grpcPort}`, insecure(), CLIENT_OPTIONS);
});

afterAll(async () => {
  client.close();
  await running.close();
  await db.close();
  await database.drop();
});

const scrape = async () => (await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`)).text();
const admit = (ceiling: ledger.Ceiling) =>
  callUnary(
    client,
    client.admit,
    ledger.AdmitRequest.fromPartial({ requestId: requestId(), orgId: "org_m", ceilings: [ceiling], worstCaseNanodollars: USD, isByok: true }),
    { deadlineMs: 10_000, service: "ledger" },
  );

const lease = (ceiling: ledger.Ceiling, minNanodollars: bigint) =>
  callUnary(
    client,
    client.lease,
    ledger.LeaseRequest.fromPartial({
      leaseId: requestId(),
      orgId: "org_m",
      ceilings: [ceiling],
      wantNanodollars: USD,
      minNanodollars,
    }),
    { deadlineMs: 10_000, service: "ledger" },
  );

test("serves its series on the metrics port", async () => {
  const res = await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`);
  const text = await res.text();
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  expect(text).toContain("# TYPE ledger_admit_total counter");
  expect(text).toContain("# TYPE ledger_admit_duration_seconds histogram");
  expect(text).toContain('process_cpu_seconds_total{service="ledger"}');
});

test("counts each Admit by result and times it", async () => {
  const hard = keyCeiling({ limitNanodollars: USD });
  const soft = keyCeiling({ limitNanodollars: USD, mode: ledger.LimitMode.LIMIT_MODE_SOFT });
  expect((await admit(hard)).admitted).toBe(true);
  expect((await admit(hard)).admitted).toBe(false);
  await admit(soft);
  expect((await admit(soft)).limitWarning).not.toBe("");

  const text = await scrape();
  expect(metricSample(text, "ledger_admit_total", { result: "admitted" })).toBe(2);
  expect(metricSample(text, "ledger_admit_total", { result: "refused" })).toBe(1);
  expect(metricSample(text, "ledger_admit_total", { result: "soft_warning" })).toBe(1);
  expect(metricSample(text, "ledger_admit_duration_seconds_count")).toBe(4);
});

test("counts each Lease by result", async () => {
  const key = keyCeiling({ limitNanodollars: USD });
  expect((await lease(key, 0n)).granted).toBe(true);
  expect((await lease(key, USD)).granted).toBe(false);

  const text = await scrape();
  expect(metricSample(text, "ledger_lease_total", { result: "granted" })).toBe(1);
  expect(metricSample(text, "ledger_lease_total", { result: "refused" })).toBe(1);
});

test("times each CloseHolds call until its batch committed", async () => {
  const call = { deadlineMs: 10_000, service: "ledger" };
  const before = metricSample(await scrape(), "ledger_closing_duration_seconds_count");
  const a = await admit(keyCeiling({ limitNanodollars: USD }));
  const b = await admit(keyCeiling({ limitNanodollars: USD }));

  await callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial({ settlements: [{ holdId: a.holdId, listCostNanodollars: 1n }] }), call);
  await callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial({ releases: [{ holdId: b.holdId }] }), call);
  await callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial({}), call);

  expect(metricSample(await scrape(), "ledger_closing_duration_seconds_count") - before).toBe(3);
});

test("counts the AdmitStream streams open, and counts their Admits as Admit's", async () => {
  const streams = new CallStreams<ledger.AdmitRequest, ledger.AdmitResponse>({
    open: () => client.admitStream(),
    unary: (req) => callUnary(client, client.admit, req, { deadlineMs: 10_000, service: "ledger" }),
    service: "ledger",
    deadlineMs: 10_000,
    streams: 3,
    log: createLogger({ level: "silent" }),
  });
  const before = await scrape();
  expect(metricSample(before, "ledger_admit_streams")).toBe(0);
  const answers = await Promise.all(
    [1, 2, 3].map(() =>
      streams.call(ledger.AdmitRequest.fromPartial({ requestId: requestId(), orgId: "org_m", ceilings: [keyCeiling({ limitNanodollars: USD })], worstCaseNanodollars: USD, isByok: true })),
    ),
  );
  expect(answers.every((a) => a.admitted)).toBe(true);
  const during = await scrape();
  expect(metricSample(during, "ledger_admit_streams")).toBe(3);
  expect(metricSample(during, "ledger_admit_total", { result: "admitted" }) - metricSample(before, "ledger_admit_total", { result: "admitted" })).toBe(3);
  await streams.close();
  expect(metricSample(await scrape(), "ledger_admit_streams")).toBe(0);
});
