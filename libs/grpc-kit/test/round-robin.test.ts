import { callUnary, clientOptionsFor, insecure, startGrpcServer, unaryHandler, type RunningGrpcServer } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ledger } from "@router/proto";

const log = createLogger({ level: "error" });

/** A ledger server that counts the Admit calls it answers. */
async function countingLedger(): Promise<{ server: RunningGrpcServer; calls: () => number }> {
  let calls = 0;
  const answer = unaryHandler(async () => {
    calls++;
    return ledger.AdmitResponse.fromPartial({ admitted: true });
  }, log);
  const empty = unaryHandler(async () => ({}), log);
  const implementation = { admit: answer, settle: empty, release: empty, closeHolds: empty, lease: empty, usage: empty } as unknown as ledger.LedgerServiceServer;
  const server = await startGrpcServer([{ definition: ledger.LedgerServiceService, implementation }], { port: 0, log });
  return { server, calls: () => calls };
}

const admit = (client: ledger.LedgerServiceClient, i: number) =>
  callUnary(client, client.admit, ledger.AdmitRequest.fromPartial({ requestId: `r${i}`, orgId: "org_1", worstCaseNanodollars: 1n }), {
    deadlineMs: 2_000,
    service: "ledger",
  });

let a: Awaited<ReturnType<typeof countingLedger>>;
let b: Awaited<ReturnType<typeof countingLedger>>;

beforeAll(async () => {
  a = await countingLedger();
  b = await countingLedger();
});

afterAll(async () => {
  await a.server.close();
  await b.server.close();
});

describe("clientOptionsFor balancing", () => {
  it("answers through a dns:/// target, as the gateway's clients are configured on Kubernetes", async () => {
    const before = a.calls();
    const target = `dns:///localhost:${a.server.port}`;
    const client = new ledger.LedgerServiceClient(target, insecure(), clientOptionsFor(target));
    try {
      await expect(admit(client, 0)).resolves.toMatchObject({ admitted: true });
      expect(a.calls()).toBe(before + 1);
    } finally {
      client.close();
    }
  });

  it("spreads calls over every resolved address (a headless Service's pods) instead of pinning one", async () => {
    // The options of a dns:/// target, on a target resolving to two servers, as DNS for a headless
    // Service resolves to its pods.
    const options = clientOptionsFor("dns:///ledger:50052");
    const target = `ipv4:127.0.0.1:${a.server.port},127.0.0.1:${b.server.port}`;
    const [a0, b0] = [a.calls(), b.calls()];
    const client = new ledger.LedgerServiceClient(target, insecure(), options);
    try {
      for (let i = 0; i < 20; i++) await admit(client, i);
    } finally {
      client.close();
    }
    expect(a.calls() - a0 + (b.calls() - b0)).toBe(20);
    expect(a.calls() - a0).toBeGreaterThanOrEqual(5);
    expect(b.calls() - b0).toBeGreaterThanOrEqual(5);
  });

  it("keeps a plain host:port on one connection (pick_first), as without balancing", async () => {
    const target = `ipv4:127.0.0.1:${a.server.port},127.0.0.1:${b.server.port}`;
    const [a0, b0] = [a.calls(), b.calls()];
    const client = new ledger.LedgerServiceClient(target, insecure(), clientOptionsFor(`127.0.0.1:${a.server.port}`));
    try {
      for (let i = 0; i < 10; i++) await admit(client, i);
    } finally {
      client.close();
    }
    expect(Math.min(a.calls() - a0, b.calls() - b0)).toBe(0);
  });
});
