import * as grpc from "@grpc/grpc-js";
import { DomainError } from "@router/errors";
import {
  CallStreams,
  CallStreamsServer,
  callUnary,
  CLIENT_OPTIONS,
  insecure,
  startGrpcServer,
  unaryHandler,
  type RunningGrpcServer,
} from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ledger } from "@router/proto";

const log = createLogger({ level: "error" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

type Admit = (req: ledger.AdmitRequest) => Promise<ledger.AdmitResponse>;

/**
 * A ledger whose Admit (unary and streamed) runs `answer`, through a CallStreamsServer that a test
 * can swap for a new one (`replace`), as a new replica would take over. Counts what each handled.
 */
async function startLedger(answer: Admit, opts: { streamed?: boolean } = {}) {
  const handled: string[] = [];
  const counted: Admit = (req) => {
    handled.push(req.requestId);
    return answer(req);
  };
  let streams = new CallStreamsServer(log);
  const empty = unaryHandler(async () => ({}), log);
  const implementation: Record<string, unknown> = { admit: unaryHandler(counted, log), closeHolds: empty, lease: empty, usage: empty };
  /** How many calls each message the server received carried. */
  const messages: number[] = [];
  if (opts.streamed !== false) {
    implementation.admitStream = (call: Parameters<ReturnType<CallStreamsServer["handler"]>>[0]) => {
      call.on("data", (message: { calls: unknown[] }) => void messages.push(message.calls.length));
      streams.handler(counted)(call);
    };
  }
  const server = await startGrpcServer([{ definition: ledger.LedgerServiceService, implementation: implementation as grpc.UntypedServiceImplementation }], {
    port: 0,
    log,
  });
  return {
    server,
    handled,
    messages,
    streams: () => streams,
    replace: () => {
      const old = streams;
      streams = new CallStreamsServer(log);
      return old;
    },
    close: async () => {
      streams.close();
      await server.close();
    },
  };
}

const request = (requestId: string, worstCase = 1n) => ledger.AdmitRequest.fromPartial({ requestId, orgId: "org_1", worstCaseNanodollars: worstCase });

/** Admit on streams of `client`; `onOpen` hears of each stream opened. */
function streamsOf(
  client: ledger.LedgerServiceClient,
  opts: { streams?: number; deadlineMs?: number; maxAgeMs?: number; log?: typeof log; onOpen?: () => void } = {},
) {
  const deadlineMs = opts.deadlineMs ?? 2_000;
  return new CallStreams<ledger.AdmitRequest, ledger.AdmitResponse>({
    open: () => {
      opts.onOpen?.();
      return client.admitStream();
    },
    unary: (req) => callUnary(client, client.admit, req, { deadlineMs, service: "ledger" }),
    service: "ledger",
    deadlineMs,
    streams: opts.streams ?? 2,
    maxAgeMs: opts.maxAgeMs,
    log: opts.log ?? log,
  });
}

/** A promise a handler waits on until the test lets it go. */
function gate(): { passed: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const passed = new Promise<void>((resolve) => (release = resolve));
  return { passed, release };
}

const admitted = (req: ledger.AdmitRequest) => ledger.AdmitResponse.fromPartial({ admitted: true, holdId: `hold_${req.requestId}` });

const running: { close(): Promise<void> }[] = [];
const clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(running.splice(0).map((r) => r.close()));
});

async function ledgerAndClient(answer: Admit, opts: { streamed?: boolean; target?: (port: number) => string } = {}) {
  const l = await startLedger(answer, opts);
  running.push(l);
  const client = new ledger.LedgerServiceClient(`127.0.0.1:${l.server.port}`, insecure(), CLIENT_OPTIONS);
  clients.push(client);
  return { ledger: l, client };
}

describe("CallStreams", () => {
  it("answers each call by its id when the server answers them out of order, on the streams it keeps open", async () => {
    // The first calls wait longest: their answers come last.
    const { ledger: l, client } = await ledgerAndClient(async (req) => {
      await sleep(Number(req.worstCaseNanodollars));
      return admitted(req);
    });
    const calls = streamsOf(client, { streams: 3 });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => calls.call(request(`r${i}`, BigInt(60 - 2 * i)))));
    expect(answers.map((a) => a.holdId)).toEqual(Array.from({ length: 30 }, (_, i) => `hold_r${i}`));
    expect(l.handled).toHaveLength(30);
    expect(calls.openStreams).toBe(3);
    expect(l.streams().streams).toBe(3);
    await calls.close();
    await waitFor(() => l.streams().streams === 0, "the server's streams to end");
  });

  it("fails a call with the error its unary call gives: code, status, message and details", async () => {
    const { client } = await ledgerAndClient(async (req) => {
      if (req.requestId === "conflict") throw new DomainError("conflict", "the run is paused", { status: 409, details: { field: "run_id", ü: "ß" } });
      if (req.requestId === "invalid") throw new DomainError("invalid_request", "org_id: is required", { details: { field: "org_id" } });
      throw new Error("a bug");
    });
    const calls = streamsOf(client);
    for (const id of ["conflict", "invalid", "internal"]) {
      const unary = await callUnary(client, client.admit, request(id), { deadlineMs: 2_000, service: "ledger" }).catch((e: unknown) => e);
      const streamed = await calls.call(request(id)).catch((e: unknown) => e);
      expect(streamed).toBeInstanceOf(DomainError);
      const { code, status, message, details } = unary as DomainError;
      expect(streamed).toMatchObject({ code, status, message, details: details ?? undefined });
    }
    await expect(calls.call(request("conflict"))).rejects.toMatchObject({ code: "conflict", status: 409, details: { field: "run_id", ü: "ß" } });
    await calls.close();
  });

  it("ends a call at its deadline as a timeout, drops its late answer, and goes on answering the others", async () => {
    const { client } = await ledgerAndClient(async (req) => {
      if (req.requestId === "slow") await sleep(900);
      return admitted(req);
    });
    const calls = streamsOf(client, { streams: 1, deadlineMs: 250 });
    // The stream opens with the first call: on a busy machine that alone can outlast the deadline.
    let warm: unknown;
    for (let tries = 0; tries < 10 && !warm; tries++) warm = await calls.call(request("warm")).catch(() => undefined);
    expect(warm).toMatchObject({ holdId: "hold_warm" });
    const started = Date.now();
    await expect(calls.call(request("slow"))).rejects.toMatchObject({ code: "router.ledger_timeout", status: 503 });
    expect(Date.now() - started).toBeLessThan(800);
    await sleep(900);
    await expect(calls.call(request("after"))).resolves.toMatchObject({ holdId: "hold_after" });
    expect(calls.openStreams).toBe(1);
    await calls.close();
  });

  it("sends calls unary to a server without the stream method (an older one), and says so once", async () => {
    const { ledger: l, client } = await ledgerAndClient(async (req) => admitted(req), { streamed: false });
    const warnings: unknown[] = [];
    const warnLog = { ...log, warn: (o: unknown) => void warnings.push(o) } as unknown as typeof log;
    const calls = streamsOf(client, { log: warnLog });
    const answers = await Promise.all(["a", "b", "c"].map((id) => calls.call(request(id))));
    expect(answers.map((a) => a.holdId)).toEqual(["hold_a", "hold_b", "hold_c"]);
    await expect(calls.call(request("d"))).resolves.toMatchObject({ holdId: "hold_d" });
    // Each call handled once, as a unary call, and no stream kept open.
    expect([...l.handled].sort()).toEqual(["a", "b", "c", "d"]);
    expect(warnings).toHaveLength(1);
    expect(calls.openStreams).toBe(0);
    await calls.close();
  });

  it("sends again, once, a call that a closing server left unread, and it is handled once", async () => {
    const heldCall = gate();
    const { ledger: l, client } = await ledgerAndClient(async (req) => {
      if (req.requestId === "held") await heldCall.passed;
      return admitted(req);
    });
    const calls = streamsOf(client, { streams: 1 });
    await calls.call(request("warm"));
    const held = calls.call(request("held"));
    await waitFor(() => l.handled.includes("held"), "the held call to be taken");
    // The server starts closing (as at shutdown), and a new replica serves the streams opened after.
    const closing = l.replace();
    closing.close();
    const late = calls.call(request("late"));
    await waitFor(() => closing.untaken === 1, "the late call to be left unread");
    heldCall.release();
    await expect(held).resolves.toMatchObject({ holdId: "hold_held" });
    await expect(late).resolves.toMatchObject({ holdId: "hold_late" });
    expect(l.handled).toEqual(["warm", "held", "late"]);
    expect(closing.streams).toBe(0);
    expect(l.streams().streams).toBe(1);
    await calls.close();
  });

  it("fails the calls of a stream whose server went away as unavailable (503)", async () => {
    const stuckCall = gate();
    const { ledger: l, client } = await ledgerAndClient(async (req) => {
      if (req.requestId === "stuck") await stuckCall.passed;
      return admitted(req);
    });
    const calls = streamsOf(client, { streams: 1, deadlineMs: 5_000 });
    await calls.call(request("warm"));
    const stuck = calls.call(request("stuck"));
    await waitFor(() => l.handled.includes("stuck"), "the stuck call to be taken");
    l.server.server.forceShutdown();
    await expect(stuck).rejects.toMatchObject({ code: "router.ledger_unavailable", status: 503 });
    expect(calls.openStreams).toBe(0);
    stuckCall.release();
    await calls.close();
  });

  it("half-closes a stream past its age and opens another, without losing a call", async () => {
    const { ledger: l, client } = await ledgerAndClient(async (req) => admitted(req));
    let opened = 0;
    const calls = streamsOf(client, { streams: 1, maxAgeMs: 50, onOpen: () => void opened++ });
    for (let i = 0; i < 6; i++) {
      await expect(calls.call(request(`r${i}`))).resolves.toMatchObject({ holdId: `hold_r${i}` });
      await sleep(30);
    }
    expect(opened).toBeGreaterThanOrEqual(3);
    await waitFor(() => l.streams().streams === 1, "the old streams to end");
    expect(l.handled).toHaveLength(6);
    await calls.close();
  });

  it("answers every call sent just before close before the stream ends, and refuses calls after it (503)", async () => {
    const { ledger: l, client } = await ledgerAndClient(async (req) => admitted(req));
    const calls = streamsOf(client, { streams: 1 });
    await calls.call(request("warm"));
    const sent = Array.from({ length: 200 }, (_, i) => calls.call(request(`r${i}`)));
    const closed = calls.close();
    const answers = await Promise.all(sent);
    await closed;
    expect(answers).toHaveLength(200);
    expect(l.handled).toHaveLength(201);
    await expect(calls.call(request("after"))).rejects.toMatchObject({ status: 503 });
  });

  it("sends one call a message on a quiet stream, and gathers the calls made while a message is being written", async () => {
    const { ledger: l, client } = await ledgerAndClient(async (req) => admitted(req));
    const calls = streamsOf(client, { streams: 1 });
    await calls.call(request("alone"));
    expect(l.messages).toEqual([1]);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => calls.call(request(`r${i}`))));
    expect(answers.map((a) => a.holdId)).toEqual(Array.from({ length: 200 }, (_, i) => `hold_r${i}`));
    // The first goes at once; the rest wait for its write and go together, in a few messages.
    expect(l.messages.slice(0, 2)).toEqual([1, 1]);
    expect(l.messages.reduce((a, b) => a + b, 0)).toBe(201);
    expect(l.messages.length).toBeLessThan(10);
    await calls.close();
  });

  it("places its streams on every server of a round-robin channel", async () => {
    const a = await startLedger(async (req) => admitted(req));
    const b = await startLedger(async (req) => admitted(req));
    running.push(a, b);
    const client = new ledger.LedgerServiceClient(`ipv4:127.0.0.1:${a.server.port},127.0.0.1:${b.server.port}`, insecure(), {
      ...CLIENT_OPTIONS,
      "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    });
    clients.push(client);
    // Round robin spreads calls once both connections are ready.
    for (let i = 0; a.handled.length === 0 || b.handled.length === 0; i++) {
      if (i === 200) throw new Error("round robin never reached both servers");
      await callUnary(client, client.admit, request(`u${i}`), { deadlineMs: 2_000, service: "ledger" });
      await sleep(5);
    }
    const calls = streamsOf(client, { streams: 4 });
    await Promise.all(Array.from({ length: 40 }, (_, i) => calls.call(request(`s${i}`))));
    expect(a.streams().streams).toBe(2);
    expect(b.streams().streams).toBe(2);
    expect(a.handled.filter((id) => id.startsWith("s"))).toHaveLength(20);
    await calls.close();
  });
});
