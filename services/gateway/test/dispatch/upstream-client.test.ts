import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UpstreamClient } from "../../src/dispatch/upstream-client";

/** A provider stand-in whose handler each test sets; it records every request it was sent. */
class Upstream {
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  readonly received: { body: string; closedEarly: boolean }[] = [];
  private server!: Server;
  url!: URL;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const seen = { body: "", closedEarly: false };
      this.received.push(seen);
      res.on("close", () => {
        if (!res.writableFinished) seen.closedEarly = true;
      });
      req.setEncoding("utf8");
      req.on("data", (c: string) => (seen.body += c));
      req.on("end", () => this.handler(req, res));
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = new URL(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/chat/completions`);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("UpstreamClient.sendWhole: an answer read whole, without a stream", () => {
  const upstream = new Upstream();
  let client: UpstreamClient;
  const request = (body = '{"model":"m"}') => ({ url: upstream.url, headers: { "content-type": "application/json" }, body });

  beforeAll(() => upstream.start());
  beforeEach(() => {
    upstream.received.length = 0;
    client = new UpstreamClient({ idleMs: 300, headersMs: 2_000 });
  });
  afterEach(() => client.close());
  afterAll(() => upstream.close());

  it("gives the status, the headers and the body sent in several chunks, the request's body delivered", async () => {
    upstream.handler = (_req, res) => {
      res.writeHead(201, { "content-type": "application/json", "x-request-id": "abc" });
      res.write('{"text":"hé');
      setTimeout(() => res.end('llo"}'), 20);
    };
    const answer = await client.sendWhole(request('{"model":"m","n":1}'), new AbortController().signal);
    expect(answer).toEqual({ statusCode: 201, headers: expect.objectContaining({ "x-request-id": "abc" }), text: '{"text":"héllo"}' });
    expect(upstream.received[0]?.body).toBe('{"model":"m","n":1}');
  });

  it("leaves out a UTF-8 byte order mark, as undici's text() does, and gives an empty body as empty text", async () => {
    upstream.handler = (_req, res) => res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]));
    expect((await client.sendWhole(request(), new AbortController().signal)).text).toBe('{"a":1}');
    upstream.handler = (_req, res) => {
      res.writeHead(503);
      res.end();
    };
    expect(await client.sendWhole(request(), new AbortController().signal)).toMatchObject({ statusCode: 503, text: "" });
  });

  it("fails with undici's body timeout when the body stalls, having told the caller the status that arrived", async () => {
    upstream.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"partial":');
    };
    const reached = { status: null as number | null };
    await expect(client.sendWhole(request(), new AbortController().signal, reached)).rejects.toMatchObject({ code: "UND_ERR_BODY_TIMEOUT" });
    expect(reached.status).toBe(200);
  });

  it("fails with the signal's reason when aborted mid-answer, and closes the provider's connection", async () => {
    upstream.handler = (_req, res) => {
      res.writeHead(200);
      res.write("{");
    };
    const abort = new AbortController();
    const pending = client.sendWhole(request(), abort.signal);
    await waitFor(() => upstream.received.length === 1);
    const reason = new Error("client went away");
    abort.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await waitFor(() => upstream.received[0]?.closedEarly === true);
  });

  it("sends nothing when the signal was aborted before, and fails with undici's abort error when it has no reason", async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(client.sendWhole(request(), abort.signal)).rejects.toMatchObject({ name: "AbortError" });
    expect(upstream.received).toHaveLength(0);
  });

  it("fails with the connection's error when the provider resets it", async () => {
    upstream.handler = (req) => req.socket.destroy();
    await expect(client.sendWhole(request(), new AbortController().signal)).rejects.toMatchObject({ code: "UND_ERR_SOCKET" });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}
