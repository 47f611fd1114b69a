import { CallStreams, callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ledger } from "@router/proto";
import { keyCeiling, openRunId, orgId, requestId, runTenant, startTestLedger, USD, type Caller, type TestLedger } from "./ledger-fixture";

// AdmitStream is Admit as messages on a long-lived stream (the gateway's path): every answer must be
// the one Admit gives, on the real ledger and its database.

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "admit_stream", holdTtlMs: 60_000 });
});
afterAll(() => l.close());

const tenant = runTenant;
const openRun = (agent: Caller, body: Record<string, unknown>) => openRunId(l, agent, body);

const turnsUsed = async (agent: Caller, runId: string) => ((await l.http("GET", `/v1/runs/${runId}`, agent)).json.data as { turns_used: number }).turns_used;

describe("AdmitStream", () => {
  it("takes a turn as Admit does: the same request id is the same turn either way, and the limit refuses alike", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1, max_turns: 2 });
    const ceiling = keyCeiling();
    const turn = (id: string) => ({ requestId: id, orgId: org, runId: run, ceilings: [ceiling], worstCaseNanodollars: 10n, isByok: true });
    const first = requestId();

    const streamed = await l.admitStreamed(turn(first));
    const unaryAgain = await l.admit(turn(first));
    expect(streamed).toMatchObject({ admitted: true, holdId: expect.stringMatching(/^hold_/) });
    expect(unaryAgain).toEqual(streamed);
    expect(await turnsUsed(agent, run)).toBe(1);

    await expect(l.admitStreamed(turn(requestId()))).resolves.toMatchObject({ admitted: true });
    const refusedStreamed = await l.admitStreamed(turn(requestId()));
    const refusedUnary = await l.admit(turn(requestId()));
    expect(refusedStreamed.admitted).toBe(false);
    expect(refusedStreamed.refusal).toMatchObject({ httpStatus: 403, scope: "run" });
    expect(refusedStreamed).toEqual(refusedUnary);
    expect(await turnsUsed(agent, run)).toBe(2);
  });

  it("fails a bad request as Admit does: the field named, another organisation's run not found", async () => {
    const { agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    await expect(l.admitStreamed({ requestId: requestId(), worstCaseNanodollars: 1n })).rejects.toMatchObject({
      status: 400,
      details: { field: "org_id" },
    });
    await expect(l.admitStreamed({ requestId: requestId(), orgId: orgId(), runId: run, worstCaseNanodollars: 1n, isByok: true })).rejects.toMatchObject({
      status: 404,
    });
    await expect(l.admitStreamed({ requestId: requestId(), orgId: orgId(), runId: "not-a-run", worstCaseNanodollars: 1n })).rejects.toMatchObject({
      status: 400,
      details: { field: "run_id" },
    });
  });

  it("counts each of many turns sent at once exactly once, and refuses past the limit", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1, max_turns: 30 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => l.admitStreamed({ requestId: requestId(), orgId: org, runId: run, worstCaseNanodollars: USD / 1000n, isByok: true })),
    );
    expect(answers.filter((a) => a.admitted)).toHaveLength(30);
    expect(answers.filter((a) => !a.admitted).every((a) => a.refusal?.scope === "run")).toBe(true);
    expect(await turnsUsed(agent, run)).toBe(30);
    expect(l.admitStreams()).toBe(2);
  });

  it("ends its open streams when it shuts down, without waiting for the server's forced shutdown", async () => {
    const replica = await startTestLedger({ replicaOf: l });
    const client = new ledger.LedgerServiceClient(`127.0.0.1:${replica.grpcPort}`, insecure(), CLIENT_OPTIONS);
    const warned: unknown[] = [];
    const log = createLogger({ level: "silent" });
    const streams = new CallStreams<ledger.AdmitRequest, ledger.AdmitResponse>({
      open: () => client.admitStream(),
      unary: (req) => callUnary(client, client.admit, req, { deadlineMs: 5_000, service: "ledger" }),
      service: "ledger",
      deadlineMs: 5_000,
      streams: 2,
      log: { ...log, warn: (o: unknown) => void warned.push(o) } as unknown as typeof log,
    });
    try {
      const { org } = tenant();
      await Promise.all([1, 2].map(() => streams.call(ledger.AdmitRequest.fromPartial({ requestId: requestId(), orgId: org, worstCaseNanodollars: 1n, ceilings: [keyCeiling()], isByok: true }))));
      expect(streams.openStreams).toBe(2);
      const started = Date.now();
      await replica.close();
      // grpc-js forces open streams closed two seconds into a shutdown; ended by the ledger, they go at once.
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(streams.openStreams).toBe(0);
      expect(warned).toEqual([]);
    } finally {
      await streams.close();
      client.close();
    }
  });
});
