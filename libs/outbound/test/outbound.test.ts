import type { LookupAddress } from "node:dns";
import { Writable } from "node:stream";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { AllowedHosts, guardedLookup, Outbound, SIGNATURE_HEADER, verifySignature, type OutboundOptions } from "@router/outbound";
import { startHttpsReceiver, type HttpsReceiver } from "@router/testkit";

const silentLog = createLogger({ level: "silent" });

describe("outbound delivery to real HTTPS receivers on loopback", () => {
  let receiver: HttpsReceiver;
  const open: Outbound[] = [];

  beforeAll(async () => {
    receiver = await startHttpsReceiver({ names: ["hooks.example.com"] });
  });
  afterAll(async () => {
    await receiver.close();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respondWith(() => ({ status: 200 }));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
  });

  /** Loopback is allowed only through the test override, as the e2e stack sets it. */
  const outbound = (opts: Partial<OutboundOptions> = {}): Outbound => {
    const o = new Outbound({ log: silentLog, allowHosts: ["127.0.0.1"], ca: receiver.ca, retries: 2, retryDelayMs: 5, timeoutMs: 2_000, ...opts });
    open.push(o);
    return o;
  };

  it("posts the body once with a signature that verifies under the secret", async () => {
    const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
    const body = JSON.stringify({ type: "test", n: 1 });
    const outcome = await outbound({ clock }).deliver({ url: `${receiver.url}/hook`, body, signingSecret: "whsec_abc" });

    expect(outcome).toEqual({ status: "sent", httpStatus: 200, error: null, attempts: 1, durationMs: 0 });
    expect(receiver.requests).toHaveLength(1);
    const got = receiver.requests[0]!;
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/hook");
    expect(got.body).toBe(body);
    expect(got.headers["content-type"]).toBe("application/json");
    const signature = got.headers[SIGNATURE_HEADER] as string;
    expect(signature).toMatch(/^t=1795255200,v1=[0-9a-f]{64}$/);
    expect(verifySignature(signature, got.body, "whsec_abc", { nowS: 1_795_255_200 })).toBe(true);
    expect(verifySignature(signature, got.body, "whsec_other", { nowS: 1_795_255_200 })).toBe(false);
  });

  it("retries a receiver answering 500, then records the failure with its status and attempts", async () => {
    receiver.respondWith(() => ({ status: 500, body: "stack trace with secrets" }));
    const outcome = await outbound().deliver({ url: `${receiver.url}/hook`, body: "{}" });

    expect(outcome.status).toBe("failed");
    expect(outcome.httpStatus).toBe(500);
    expect(outcome.attempts).toBe(3);
    expect(outcome.error).toBe("the receiver answered HTTP 500 (after 3 attempts)");
    expect(outcome.error).not.toContain("stack trace");
    expect(receiver.requests).toHaveLength(3);
  });

  it("succeeds on a retry after a 500 and after a 429", async () => {
    receiver.respondWith((_req, n) => (n === 1 ? { status: 500 } : n === 2 ? { status: 429, headers: { "retry-after": "0" } } : { status: 204 }));
    const outcome = await outbound().deliver({ url: `${receiver.url}/hook`, body: "{}" });
    expect(outcome).toMatchObject({ status: "sent", httpStatus: 204, error: null, attempts: 3 });
  });

  it("does not retry a 4xx other than 429", async () => {
    receiver.respondWith(() => ({ status: 404 }));
    const outcome = await outbound().deliver({ url: `${receiver.url}/hook`, body: "{}" });
    expect(outcome).toMatchObject({ status: "failed", httpStatus: 404, error: "the receiver answered HTTP 404", attempts: 1 });
    expect(receiver.requests).toHaveLength(1);
  });

  it("retries a receiver that never answers, each attempt cut at the timeout", async () => {
    receiver.respondWith(() => "hang");
    const outcome = await outbound({ timeoutMs: 200, retries: 1 }).deliver({ url: `${receiver.url}/hook`, body: "{}" });
    expect(outcome).toMatchObject({
      status: "failed",
      httpStatus: null,
      error: "the receiver did not answer within 200 ms (after 2 attempts)",
      attempts: 2,
    });
    expect(receiver.requests).toHaveLength(2);
  });

  it("never follows a redirect: the 3xx is the recorded failure", async () => {
    receiver.respondWith((req) => (req.path === "/hook" ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } } : { status: 200 }));
    const outcome = await outbound().deliver({ url: `${receiver.url}/hook`, body: "{}" });
    expect(outcome).toMatchObject({
      status: "failed",
      httpStatus: 302,
      error: "the receiver answered with a redirect (HTTP 302), which deliveries never follow",
      attempts: 1,
    });
    expect(receiver.requests.map((r) => r.path)).toEqual(["/hook"]);
  });

  it("refuses a host name that resolves to 127.0.0.1 without the override, before any request", async () => {
    const resolve = () => Promise.resolve([{ address: "127.0.0.1", family: 4 }]);
    const outcome = await outbound({ allowHosts: [], resolve }).deliver({ url: "https://hooks.example.com/hook", body: "{}" });
    expect(outcome).toMatchObject({
      status: "failed",
      httpStatus: null,
      error: "the target's host resolves to a loopback address, which deliveries never reach",
      attempts: 1,
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it("delivers to that host name when the test override names it", async () => {
    const resolve = () => Promise.resolve([{ address: "127.0.0.1", family: 4 }]);
    const outcome = await outbound({ allowHosts: ["hooks.example.com"], resolve }).deliver({
      url: `https://hooks.example.com:${receiver.port}/hook`,
      body: "{}",
    });
    expect(outcome).toMatchObject({ status: "sent", httpStatus: 200 });
    expect(receiver.requests).toHaveLength(1);
  });

  it("refuses a loopback IP literal without the override", async () => {
    const outcome = await outbound({ allowHosts: [] }).deliver({ url: `${receiver.url}/hook`, body: "{}" });
    expect(outcome).toMatchObject({ status: "failed", error: "the target must use the default https port (443)", attempts: 1 });
    const literal = await outbound({ allowHosts: [] }).deliver({ url: "https://127.0.0.1/hook", body: "{}" });
    expect(literal).toMatchObject({ status: "failed", error: "the target must not be a loopback address", attempts: 1 });
    expect(receiver.requests).toHaveLength(0);
  });

  it("does not trust a receiver's certificate that no trusted CA signed, and does not retry", async () => {
    const outcome = await outbound({ ca: undefined }).deliver({ url: `${receiver.url}/hook`, body: "{}" });
    expect(outcome.status).toBe("failed");
    expect(outcome.attempts).toBe(1);
    expect(outcome.error).toMatch(/^the receiver's TLS certificate was not accepted \([A-Z_]+\)$/);
  });

  it("records skipped at once when the queue is full, never blocking the caller", async () => {
    receiver.respondWith(() => "hang");
    const o = outbound({ concurrency: 1, queueLimit: 1, retries: 0, timeoutMs: 300 });
    const first = o.deliver({ url: `${receiver.url}/a`, body: "{}" });
    const second = o.deliver({ url: `${receiver.url}/b`, body: "{}" });
    const third = await o.deliver({ url: `${receiver.url}/c`, body: "{}" });
    expect(third).toEqual({
      status: "skipped",
      httpStatus: null,
      error: "the delivery was not attempted: 1 deliveries are already waiting",
      attempts: 0,
      durationMs: 0,
    });
    expect((await first).status).toBe("failed");
    expect((await second).status).toBe("failed");
    expect(receiver.requests.map((r) => r.path)).toEqual(["/a", "/b"]);
  });

  it("skips deliveries after close", async () => {
    const o = outbound();
    await o.close();
    expect((await o.deliver({ url: `${receiver.url}/hook`, body: "{}" })).status).toBe("skipped");
  });

  it("warns at start when a test-only override is set, naming it", () => {
    const lines: string[] = [];
    const log = createLogger({ destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }) });
    open.push(new Outbound({ log, allowHosts: ["127.0.0.1"] }));
    open.push(new Outbound({ log }));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", msg: "outbound.test_override.enabled", allowHosts: ["127.0.0.1"] });
  });
});

describe("the guarded lookup sockets connect with", () => {
  const lookupOnce = (answer: LookupAddress[], allowed: string[] = [], all = true) =>
    new Promise<{ err: Error | null; result: unknown }>((resolve) => {
      guardedLookup(() => Promise.resolve(answer), new AllowedHosts(allowed))("hooks.example.com", { all }, (err, result) =>
        resolve({ err, result }),
      );
    });

  it("refuses when any one resolved address is not public, whatever the order", async () => {
    for (const answer of [
      [{ address: "93.184.216.34", family: 4 }, { address: "10.1.2.3", family: 4 }],
      [{ address: "169.254.169.254", family: 4 }, { address: "93.184.216.34", family: 4 }],
      [{ address: "2606:4700::1111", family: 6 }, { address: "::ffff:127.0.0.1", family: 6 }],
    ]) {
      const { err } = await lookupOnce(answer);
      expect(err?.name).toBe("RefusedAddressError");
    }
  });

  it("hands the socket exactly the addresses it checked", async () => {
    const answer = [{ address: "93.184.216.34", family: 4 }, { address: "2606:4700::1111", family: 6 }];
    expect(await lookupOnce(answer)).toEqual({ err: null, result: answer });
    expect((await lookupOnce(answer, [], false)).result).toBe("93.184.216.34");
  });

  it("lets an allowed address through", async () => {
    expect((await lookupOnce([{ address: "127.0.0.1", family: 4 }], ["127.0.0.1"])).err).toBeNull();
  });
});
