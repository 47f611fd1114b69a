import { createServer } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { DomainError } from "@router/errors";
import {
  CallStreams,
  CallStreamsServer,
  callUnary,
  CLIENT_OPTIONS,
  fromGrpcError,
  insecure,
  startGrpcServer,
  unaryHandler,
  type RunningGrpcServer,
} from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { health, ledger } from "@router/proto";

const logLines: string[] = [];
const log = createLogger({ level: "error", destination: { write: (s: string) => void logLines.push(s) } });

const LEDGER = "router.ledger.v1.LedgerService";

/** Handlers the deadline test holds open; answered at teardown so no call is left dangling. */
const heldCalls: Array<() => void> = [];

const admitResponse = (holdId: string): ledger.AdmitResponse =>
  ledger.AdmitResponse.fromPartial({ admitted: true, holdId });

const admitAnswer = async (req: ledger.AdmitRequest): Promise<ledger.AdmitResponse> => {
  if (req.orgId === "org_refused") {
    throw new DomainError("budget_exceeded", "key limit reached", { details: { scope: "key" } });
  }
  if (req.orgId === "org_invalid") throw new DomainError("invalid_request", "ceilings.0.limit: must be positive");
  if (req.orgId === "org_unknown") throw new DomainError("not_found", "organisation not found");
  if (req.orgId === "org_taken") {
    throw new DomainError("conflict", "request_id is already in use", { details: { field: "request_id", café: "ü" } });
  }
  if (req.orgId === "org_closed") throw new DomainError("router.run_closed", "the run is closed", { status: 409 });
  if (req.orgId === "org_crash") throw new Error("postgres password=hunter2 rejected");
  return admitResponse(`hold_${req.requestId}`);
};

const implementation: ledger.LedgerServiceServer = {
  admit: unaryHandler(admitAnswer, log),
  admitStream: new CallStreamsServer(log).handler(admitAnswer),
  closeHolds: unaryHandler(async () => ledger.CloseHoldsResponse.fromPartial({}), log),
  lease: unaryHandler(async () => ledger.LeaseResponse.fromPartial({}), log),
  workspaceSpend: unaryHandler(async () => ledger.WorkspaceSpendResponse.fromPartial({}), log),
  budgetSubjects: unaryHandler(async () => ledger.BudgetSubjectsResponse.fromPartial({}), log),
  creditTerms: unaryHandler(async () => ledger.CreditTermsResponse.fromPartial({}), log),
  usage: unaryHandler(
    () =>
      new Promise<ledger.UsageResponse>((resolve) => {
        heldCalls.push(() => resolve(ledger.UsageResponse.fromPartial({})));
      }),
    log,
  ),
};

let server: RunningGrpcServer;
let client: ledger.LedgerServiceClient;
let healthClient: health.HealthClient;

beforeAll(async () => {
  server = await startGrpcServer([{ definition: ledger.LedgerServiceService, implementation }], { port: 0, log });
  const address = `127.0.0.1:${server.port}`;
  client = new ledger.LedgerServiceClient(address, insecure(), CLIENT_OPTIONS);
  healthClient = new health.HealthClient(address, insecure(), CLIENT_OPTIONS);
});

afterAll(async () => {
  for (const answer of heldCalls) answer();
  client.close();
  healthClient.close();
  await server.close();
});

beforeEach(() => {
  logLines.length = 0;
});

function admitRequest(orgId: string, requestId = "gen-1"): ledger.AdmitRequest {
  return ledger.AdmitRequest.fromPartial({ requestId, orgId, worstCaseNanodollars: 1_000n });
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

/** A loopback port nothing listens on: bind one, then let it go. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("startGrpcServer", () => {
  it("binds the port the OS picked", () => {
    expect(server.port).toBeGreaterThan(0);
  });

  it("serves the implementation through generated clients", async () => {
    const res = await callUnary(client, client.admit, admitRequest("org_ok", "gen-42"), {
      deadlineMs: 5_000,
      service: "ledger",
    });
    expect(res).toMatchObject({ admitted: true, holdId: "hold_gen-42" });
  });

  it.each([[""], [LEDGER]])("reports SERVING for the health check of %j", async (service) => {
    const res = await callUnary(healthClient, healthClient.check, { service }, { deadlineMs: 5_000, service: "ledger" });
    expect(res.status).toBe(health.HealthCheckResponse_ServingStatus.SERVING);
  });

  it.each([["router.routing.v1.RoutingService"], ["grpc.health.v1.Health.extra"], ["ledger"]])(
    "reports SERVICE_UNKNOWN for the health check of %j",
    async (service) => {
      const res = await callUnary(healthClient, healthClient.check, { service }, { deadlineMs: 5_000, service: "x" });
      expect(res.status).toBe(health.HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN);
    },
  );
});

describe("unaryHandler errors across the wire", () => {
  it("carries a DomainError's code, message and default status to the caller", async () => {
    const err = await rejectionOf(
      callUnary(client, client.admit, admitRequest("org_refused"), { deadlineMs: 5_000, service: "ledger" }),
    );
    expect(err.code).toBe("budget_exceeded");
    expect(err.message).toBe("key limit reached");
    expect(err.status).toBe(403);
  });

  it("carries a DomainError's details, including non-ASCII text, to the caller", async () => {
    const err = await rejectionOf(
      callUnary(client, client.admit, admitRequest("org_taken"), { deadlineMs: 5_000, service: "ledger" }),
    );
    expect(err).toMatchObject({ code: "conflict", status: 409, details: { field: "request_id", café: "ü" } });
  });

  it("carries an explicit status rather than the default of its code", async () => {
    const err = await rejectionOf(
      callUnary(client, client.admit, admitRequest("org_closed"), { deadlineMs: 5_000, service: "ledger" }),
    );
    expect(err).toMatchObject({ code: "router.run_closed", status: 409, message: "the run is closed" });
  });

  it.each([
    ["org_invalid", "invalid_request", 400, grpc.status.INVALID_ARGUMENT],
    ["org_unknown", "not_found", 404, grpc.status.NOT_FOUND],
    ["org_refused", "budget_exceeded", 403, grpc.status.FAILED_PRECONDITION],
  ])("maps %s to %s (%i) and to a meaningful gRPC status", async (orgId, code, status, grpcStatus) => {
    const raw = await new Promise<grpc.ServiceError>((resolve, reject) =>
      client.admit(admitRequest(orgId), (e) => (e ? resolve(e) : reject(new Error("expected an error")))),
    );
    expect(raw.code).toBe(grpcStatus);
    const mapped = fromGrpcError(raw, "ledger");
    expect(mapped.code).toBe(code);
    expect(mapped.status).toBe(status);
  });

  it("hides a plain Error's message from the caller and logs it as a failure", async () => {
    const raw = await new Promise<grpc.ServiceError>((resolve, reject) =>
      client.admit(admitRequest("org_crash"), (e) => (e ? resolve(e) : reject(new Error("expected an error")))),
    );
    expect(raw.code).toBe(grpc.status.INTERNAL);
    expect(raw.details).not.toContain("hunter2");
    expect(logLines.join("")).toContain("grpc.handler.failed");
  });

  it("turns a server-side crash into the service's 503 for the HTTP edge, not a bare 500", async () => {
    const err = await rejectionOf(
      callUnary(client, client.admit, admitRequest("org_crash"), { deadlineMs: 5_000, service: "ledger" }),
    );
    expect(err.code).toBe("router.ledger_unavailable");
    expect(err.status).toBe(503);
  });

  it("does not log domain refusals as failures", async () => {
    await rejectionOf(callUnary(client, client.admit, admitRequest("org_refused"), { deadlineMs: 5_000, service: "ledger" }));
    expect(logLines).toEqual([]);
  });
});

describe("CallStreamsServer errors across the wire", () => {
  const streamed = () =>
    new CallStreams<ledger.AdmitRequest, ledger.AdmitResponse>({
      open: () => client.admitStream(),
      unary: (req) => callUnary(client, client.admit, req, { deadlineMs: 5_000, service: "ledger" }),
      service: "ledger",
      deadlineMs: 5_000,
      streams: 1,
      log,
    });

  it.each(["org_refused", "org_taken", "org_closed", "org_invalid", "org_unknown", "org_crash"])(
    "fails %s as the unary call does",
    async (orgId) => {
      const calls = streamed();
      try {
        const unary = await rejectionOf(callUnary(client, client.admit, admitRequest(orgId), { deadlineMs: 5_000, service: "ledger" }));
        const overStream = await rejectionOf(calls.call(admitRequest(orgId)));
        expect({ ...overStream, message: overStream.message }).toEqual({ ...unary, message: unary.message });
      } finally {
        await calls.close();
      }
    },
  );

  it("hides a plain Error's message from the caller and logs it as a failure", async () => {
    const calls = streamed();
    try {
      const err = await rejectionOf(calls.call(admitRequest("org_crash")));
      expect(err).toMatchObject({ code: "router.ledger_unavailable", status: 503 });
      expect(JSON.stringify({ ...err, message: err.message, cause: String(err.cause) })).not.toContain("hunter2");
      expect(logLines.join("")).toContain("grpc.handler.failed");
    } finally {
      await calls.close();
    }
  });
});

describe("callUnary failures", () => {
  it("maps a handler that does not answer within the deadline to router.<service>_timeout 503", async () => {
    const started = Date.now();
    const err = await rejectionOf(
      callUnary(client, client.usage, ledger.UsageRequest.fromPartial({}), { deadlineMs: 200, service: "ledger" }),
    );
    expect(err.code).toBe("router.ledger_timeout");
    expect(err.status).toBe(503);
    expect((err.cause as grpc.ServiceError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // The deadline bounded the wait; the handler never answered.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("maps a server that is down to router.<service>_unavailable 503", async () => {
    const port = await closedPort();
    const down = new ledger.LedgerServiceClient(`127.0.0.1:${port}`, insecure(), CLIENT_OPTIONS);
    try {
      const err = await rejectionOf(
        callUnary(down, down.admit, admitRequest("org_ok"), { deadlineMs: 5_000, service: "ledger" }),
      );
      expect(err.code).toBe("router.ledger_unavailable");
      expect(err.status).toBe(503);
      expect(err.message).toContain("ledger");
    } finally {
      down.close();
    }
  });

  it("names the service it was told in the error code", async () => {
    const port = await closedPort();
    const down = new health.HealthClient(`127.0.0.1:${port}`, insecure(), CLIENT_OPTIONS);
    try {
      const err = await rejectionOf(callUnary(down, down.check, { service: "" }, { deadlineMs: 5_000, service: "routing" }));
      expect(err.code).toBe("router.routing_unavailable");
    } finally {
      down.close();
    }
  });
});

describe("server shutdown", () => {
  it("stops answering after close and callers see the service as unavailable", async () => {
    const other = await startGrpcServer([{ definition: ledger.LedgerServiceService, implementation }], { port: 0, log });
    const c = new ledger.LedgerServiceClient(`127.0.0.1:${other.port}`, insecure(), CLIENT_OPTIONS);
    try {
      await callUnary(c, c.admit, admitRequest("org_ok"), { deadlineMs: 5_000, service: "ledger" });
      await other.close();
      const err = await rejectionOf(callUnary(c, c.admit, admitRequest("org_ok"), { deadlineMs: 5_000, service: "ledger" }));
      expect(err.code).toBe("router.ledger_unavailable");
    } finally {
      c.close();
    }
  });
});
