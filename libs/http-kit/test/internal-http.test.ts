import { generateIdentityKeyPair } from "@router/config";
import { createMetricsRegistry, identityPublicKeys, startInternalHttp, type RunningHttpServer } from "@router/http-kit";
import { createLogger } from "@router/logging";

const log = createLogger({ level: "silent" });

describe("an internal service's /health", () => {
  let server: RunningHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = (ready?: () => Promise<boolean>) =>
    startInternalHttp({ log, registry: createMetricsRegistry("demo", { defaultMetrics: false }), identityKeys: identityPublicKeys(generateIdentityKeyPair().publicKeys), routes: [], ready, port: 0 });
  const health = async () => {
    const res = await fetch(`http://127.0.0.1:${server!.port}/health`);
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it("follows the service's readiness: 503 while it is not ready, 200 again once it is", async () => {
    let ready = true;
    server = await start(async () => ready);
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });

    ready = false;
    expect(await health()).toEqual({ status: 503, body: { status: "unavailable", database: "unreachable" } });

    ready = true;
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });
  });

  it("is always ready without a readiness check", async () => {
    server = await start();
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });
  });
});
