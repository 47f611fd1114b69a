import { callUnary, CLIENT_OPTIONS, insecure, startGrpcServer, type RunningGrpcServer } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { health, ledger } from "@router/proto";

const log = createLogger({ level: "silent" });
const LEDGER = "router.ledger.v1.LedgerService";
const { SERVING, NOT_SERVING } = health.HealthCheckResponse_ServingStatus;

describe("grpc.health.v1 with a readiness check", () => {
  let server: RunningGrpcServer;
  let healthClient: health.HealthClient;
  let ready: boolean | "throws" = true;

  beforeAll(async () => {
    server = await startGrpcServer([{ definition: ledger.LedgerServiceService, implementation: {} }], {
      port: 0,
      log,
      ready: async () => {
        if (ready === "throws") throw new Error("probe failed");
        return ready;
      },
    });
    healthClient = new health.HealthClient(`127.0.0.1:${server.port}`, insecure(), CLIENT_OPTIONS);
  });

  afterAll(async () => {
    healthClient.close();
    await server.close();
  });

  const statusOf = async (service: string) =>
    (await callUnary(healthClient, healthClient.check, { service }, { deadlineMs: 5_000, service: "ledger" })).status;

  it("answers NOT_SERVING for the service's name while not ready, SERVING again once ready; the empty name (liveness) stays SERVING", async () => {
    expect(await statusOf(LEDGER)).toBe(SERVING);

    ready = false;
    expect(await statusOf(LEDGER)).toBe(NOT_SERVING);
    expect(await statusOf("")).toBe(SERVING);

    ready = "throws";
    expect(await statusOf(LEDGER)).toBe(NOT_SERVING);

    ready = true;
    expect(await statusOf(LEDGER)).toBe(SERVING);
  });
});
