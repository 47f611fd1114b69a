import * as grpc from "@grpc/grpc-js";
import { DomainError } from "@router/errors";
import {
  CallStreamsServer,
  callUnary,
  CLIENT_OPTIONS,
  fromGrpcError,
  InProcessServer,
  insecure,
  startGrpcServer,
  unaryHandler,
  type GrpcService,
  type RunningGrpcServer,
} from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { health, ledger } from "@router/proto";

const log = createLogger({ level: "silent" });

/** What the handlers saw, for the assertions on the server's side. */
const seen: { requests: ledger.AdmitRequest[]; metadata: grpc.Metadata[]; calls: grpc.ServerUnaryCall<unknown, unknown>[]; held: grpc.ServerUnaryCall<unknown, unknown>[] } = {
  requests: [],
  metadata: [],
  calls: [],
  held: [],
};
/** Handlers held open (the deadline and shutdown tests); answered when a test lets them go. */
const held: Array<() => void> = [];
const releaseHeld = () => held.splice(0).forEach((answer) => answer());

/** The response object the handler answered with last, kept to show the caller got a copy. */
let lastResponse: ledger.AdmitResponse | undefined;

const implementation: ledger.LedgerServiceServer = {
  admit: (call, callback) => {
    seen.calls.push(call);
    seen.metadata.push(call.metadata);
    const req = call.request;
    seen.requests.push(req);
    // A handler that changes what it was given: the caller's objects must not change with it.
    req.orgId = "changed-by-handler";
    call.metadata.set("x-changed", "by-handler");
    const id = req.requestId;
    if (id === "raw-unavailable") return callback({ code: grpc.status.UNAVAILABLE, details: "the ledger is draining" });
    if (id === "raw-plain-error") return callback(new Error("plain failure"));
    if (id === "throws") throw new Error("thrown in the handler");
    if (id === "no-answer") return callback(null, null);
    unaryHandler(async (r: ledger.AdmitRequest) => {
      if (r.requestId === "refused") throw new DomainError("budget_exceeded", "key limit reached", { details: { scope: "key", café: "ü" } });
      if (r.requestId === "invalid") throw new DomainError("invalid_request", "ceilings.0.limit: must be positive");
      if (r.requestId === "closed") throw new DomainError("router.run_closed", "the run is closed", { status: 409 });
      if (r.requestId === "crash") throw new Error("postgres password=hunter2 rejected");
      lastResponse = ledger.AdmitResponse.fromPartial({ admitted: true, holdId: `hold_${r.requestId}` });
      return lastResponse;
    }, log)(call, callback);
  },
  usage: (call, callback) => {
    seen.held.push(call);
    held.push(() => callback(null, ledger.UsageResponse.fromPartial({})));
  },
  closeHolds: unaryHandler(async () => ledger.CloseHoldsResponse.fromPartial({}), log),
  lease: unaryHandler(async () => ledger.LeaseResponse.fromPartial({}), log),
  workspaceSpend: unaryHandler(async () => ledger.WorkspaceSpendResponse.fromPartial({}), log),
  budgetSubjects: unaryHandler(async () => ledger.BudgetSubjectsResponse.fromPartial({}), log),
  creditTerms: unaryHandler(async () => ledger.CreditTermsResponse.fromPartial({}), log),
  // Served over the wire only: the in-process transport serves unary methods.
  admitStream: new CallStreamsServer(log).handler(async () => ledger.AdmitResponse.fromPartial({ admitted: true })),
};
// creditTerms is left out of what is served: both transports answer UNIMPLEMENTED.
const { creditTerms: _notServed, ...served } = implementation;

const services: GrpcService[] = [{ definition: ledger.LedgerServiceService, implementation: served }];
let ready = true;
let wire: RunningGrpcServer;
let inProcess: InProcessServer;
const clients: Record<string, ledger.LedgerServiceClient> = {};
const healthClients: Record<string, health.HealthClient> = {};

beforeAll(async () => {
  wire = await startGrpcServer(services, { port: 0, log, ready: async () => ready });
  inProcess = new InProcessServer(services, { ready: async () => ready });
  clients["over the wire"] = new ledger.LedgerServiceClient(`127.0.0.1:${wire.port}`, insecure(), CLIENT_OPTIONS);
  clients["in process"] = inProcess.client(ledger.LedgerServiceClient);
  healthClients["over the wire"] = new health.HealthClient(`127.0.0.1:${wire.port}`, insecure(), CLIENT_OPTIONS);
  healthClients["in process"] = inProcess.client(health.HealthClient);
});

afterAll(async () => {
  releaseHeld();
  for (const c of [...Object.values(clients), ...Object.values(healthClients)]) c.close();
  await Promise.all([wire.close(), inProcess.close()]);
});

beforeEach(() => {
  seen.requests.length = 0;
  seen.metadata.length = 0;
  seen.calls.length = 0;
  seen.held.length = 0;
  ready = true;
});

const admit = (requestId: string, orgId = "org_1") => ledger.AdmitRequest.fromPartial({ requestId, orgId, worstCaseNanodollars: 1_000n });

/** The raw ServiceError a call ends with. */
function rawError(client: ledger.LedgerServiceClient, req: ledger.AdmitRequest, metadata = new grpc.Metadata(), options: grpc.CallOptions = {}) {
  return new Promise<grpc.ServiceError>((resolve, reject) =>
    client.admit(req, metadata, options, (err) => (err ? resolve(err) : reject(new Error("expected the call to fail")))),
  );
}

/** What a caller can read of a ServiceError, and what fromGrpcError makes of it. */
function shapeOf(err: grpc.ServiceError) {
  const mapped = fromGrpcError(err, "ledger");
  return {
    error: { code: err.code, details: err.details, message: err.message, metadata: trailers(err.metadata) },
    mapped: { code: mapped.code, status: mapped.status, message: mapped.message, details: mapped.details },
  };
}

/** The trailers a handler sent: without the HTTP/2 response headers (content-type, date) the wire adds. */
function trailers(metadata: grpc.Metadata): Record<string, grpc.MetadataValue> {
  const { "content-type": _contentType, date: _date, ...sent } = metadata.getMap();
  return sent;
}

async function rejectionOf(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected the call to fail with a DomainError");
}

describe.each(["over the wire", "in process"])("a generated client %s", (transport) => {
  const client = () => clients[transport] as ledger.LedgerServiceClient;

  it("answers through callUnary with the handler's response", async () => {
    const c = client();
    const res = await callUnary(c, c.admit.bind(c), admit("gen-1"), { deadlineMs: 5_000, service: "ledger" });
    expect(res).toEqual(ledger.AdmitResponse.fromPartial({ admitted: true, holdId: "hold_gen-1" }));
    // The caller holds a copy: the handler's object is not the caller's.
    expect(res).not.toBe(lastResponse);
  });

  it("hands the handler a copy of the request and of the metadata, which it cannot change for the caller", async () => {
    const c = client();
    const req = admit("gen-2", "org_mine");
    const metadata = new grpc.Metadata();
    metadata.set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    await new Promise((resolve, reject) => c.admit(req, metadata, (err, res) => (err ? reject(err) : resolve(res))));
    expect(seen.requests[0]).not.toBe(req);
    expect(req.orgId).toBe("org_mine");
    expect(seen.metadata[0]?.get("traceparent")).toEqual(["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"]);
    expect(metadata.get("x-changed")).toEqual([]);
    expect(seen.calls[0]?.getPath()).toBe("/router.ledger.v1.LedgerService/Admit");
  });

  it("answers the health check as startGrpcServer does, readiness included", async () => {
    const h = healthClients[transport] as health.HealthClient;
    const check = (service: string) => callUnary(h, h.check.bind(h), { service }, { deadlineMs: 5_000, service: "ledger" });
    const { SERVING, NOT_SERVING, SERVICE_UNKNOWN } = health.HealthCheckResponse_ServingStatus;
    expect((await check("")).status).toBe(SERVING);
    expect((await check("router.ledger.v1.LedgerService")).status).toBe(SERVING);
    expect((await check("router.routing.v1.RoutingService")).status).toBe(SERVICE_UNKNOWN);
    ready = false;
    expect((await check("router.ledger.v1.LedgerService")).status).toBe(NOT_SERVING);
    expect((await check("")).status).toBe(SERVING);
  });

  it("ends a call past its deadline with DEADLINE_EXCEEDED, the gateway's timeout, and cancels it for the handler", async () => {
    const c = client();
    const started = Date.now();
    // Long enough that a busy machine still delivers the call before the deadline; the server may see
    // it only after the caller gave up (client and server share this process's event loop).
    const err = await rejectionOf(callUnary(c, c.usage.bind(c), ledger.UsageRequest.fromPartial({}), { deadlineMs: 1_000, service: "ledger" }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(err).toMatchObject({ code: "router.ledger_timeout", status: 503 });
    expect((err.cause as grpc.ServiceError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await waitUntil(() => seen.held.length === 1);
    const serverCall = seen.held[0];
    await waitUntil(() => serverCall?.cancelled === true);
    // A late answer is dropped, not delivered.
    releaseHeld();
  });

  it("fails a call whose deadline has passed before it starts", async () => {
    const err = await rawError(client(), admit("gen-3"), new grpc.Metadata(), { deadline: Date.now() - 1 });
    expect(err.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it("tells the handler when the caller cancels, and the caller sees CANCELLED", async () => {
    const c = client();
    const err = await new Promise<grpc.ServiceError>((resolve) => {
      const call = c.usage(ledger.UsageRequest.fromPartial({}), (e) => resolve(e as grpc.ServiceError));
      void waitUntil(() => seen.held.length === 1).then(() => call.cancel());
    });
    expect(err.code).toBe(grpc.status.CANCELLED);
    const serverCall = seen.held[0];
    await waitUntil(() => serverCall?.cancelled === true);
    releaseHeld();
  });

  it("refuses a request larger than the receiver's 4 MiB with RESOURCE_EXHAUSTED", async () => {
    const oversized = "x".repeat(4 * 1024 * 1024 + 10);
    const err = await rawError(client(), admit(oversized));
    expect(err.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Only this request: on a busy machine an earlier test's call can reach the handler late.
    expect(seen.requests.filter((r) => r.requestId === oversized)).toEqual([]);
  });
});

describe("in process, a call fails as it does over the wire", () => {
  const both = async (req: () => ledger.AdmitRequest) => ({
    wire: shapeOf(await rawError(clients["over the wire"] as ledger.LedgerServiceClient, req())),
    inProcess: shapeOf(await rawError(clients["in process"] as ledger.LedgerServiceClient, req())),
  });

  it.each([
    ["a DomainError with details", "refused", grpc.status.FAILED_PRECONDITION, "budget_exceeded"],
    ["an invalid request", "invalid", grpc.status.INVALID_ARGUMENT, "invalid_request"],
    ["an explicit status", "closed", grpc.status.FAILED_PRECONDITION, "router.run_closed"],
    ["a crash, its message hidden", "crash", grpc.status.INTERNAL, "router.ledger_unavailable"],
    ["a raw UNAVAILABLE status", "raw-unavailable", grpc.status.UNAVAILABLE, "router.ledger_unavailable"],
    ["a plain Error passed to the callback", "raw-plain-error", grpc.status.UNKNOWN, "router.ledger_unavailable"],
    ["a handler that throws", "throws", grpc.status.UNKNOWN, "router.ledger_unavailable"],
    ["a handler that answers nothing", "no-answer", grpc.status.INTERNAL, "router.ledger_unavailable"],
  ])("%s", async (_what, requestId, grpcCode, domainCode) => {
    const { wire: overWire, inProcess: inProc } = await both(() => admit(requestId));
    expect(inProc).toEqual(overWire);
    expect(inProc.error.code).toBe(grpcCode);
    expect(inProc.mapped.code).toBe(domainCode);
    expect(inProc.error.details).not.toContain("hunter2");
  });

  it("a method the server does not implement", async () => {
    const call = (c: ledger.LedgerServiceClient) =>
      new Promise<grpc.ServiceError>((resolve, reject) =>
        c.creditTerms(ledger.CreditTermsRequest.fromPartial({}), (err) => (err ? resolve(err) : reject(new Error("expected a failure")))),
      );
    const overWire = shapeOf(await call(clients["over the wire"] as ledger.LedgerServiceClient));
    const inProc = shapeOf(await call(clients["in process"] as ledger.LedgerServiceClient));
    expect(inProc).toEqual(overWire);
    expect(inProc.error.code).toBe(grpc.status.UNIMPLEMENTED);
  });
});

describe("InProcessServer", () => {
  it("counts the calls it answered", async () => {
    const server = new InProcessServer(services);
    const c = server.client(ledger.LedgerServiceClient);
    await callUnary(c, c.admit.bind(c), admit("gen-4"), { deadlineMs: 5_000, service: "ledger" });
    await rejectionOf(callUnary(c, c.admit.bind(c), admit("refused"), { deadlineMs: 5_000, service: "ledger" }));
    expect(server.calls).toBe(2);
    await server.close();
  });

  it("lets the calls in flight finish on close and refuses new ones as unavailable", async () => {
    const server = new InProcessServer(services);
    const c = server.client(ledger.LedgerServiceClient);
    const inFlight = callUnary(c, c.usage.bind(c), ledger.UsageRequest.fromPartial({}), { deadlineMs: 5_000, service: "ledger" });
    await waitUntil(() => seen.held.length === 1);
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    const refused = await rejectionOf(callUnary(c, c.admit.bind(c), admit("gen-5"), { deadlineMs: 5_000, service: "ledger" }));
    expect(refused).toMatchObject({ code: "router.ledger_unavailable", status: 503 });
    expect(closed).toBe(false);
    releaseHeld();
    await expect(inFlight).resolves.toEqual(ledger.UsageResponse.fromPartial({}));
    await closing;
    expect(closed).toBe(true);
  });

  it("names each client method after its method, which callUnary's client span is named by", () => {
    const c = clients["in process"] as ledger.LedgerServiceClient;
    expect([c.admit.name, c.closeHolds.name, c.admit.bind(c).name]).toEqual(["admit", "closeHolds", "bound admit"]);
  });

  it("never answers a caller inside its own call", async () => {
    const server = new InProcessServer(services);
    const c = server.client(ledger.LedgerServiceClient);
    let answered = false;
    c.admit(admit("gen-6"), new grpc.Metadata(), { deadline: Date.now() - 1 }, () => (answered = true));
    expect(answered).toBe(false);
    await server.close();
    expect(answered).toBe(true);
    // Past its deadline before it started: the handler never ran.
    expect(seen.requests).toEqual([]);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
}
