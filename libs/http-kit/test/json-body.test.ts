import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import express from "express";
import { jsonBody } from "../src/json-body";

type Parser = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** What a parser made of one request: the body it set, or the status and type of its error, and how many times it called next. */
interface Outcome {
  body?: unknown;
  error?: { status: unknown; type: unknown };
  nextCalls: number;
}

const LIMIT = "1kb";

/** A server that runs `parser` on every request and answers with its outcome as JSON. */
async function serverWith(parser: Parser): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const outcome: Outcome = { nextCalls: 0 };
    parser(req, res, (err?: unknown) => {
      outcome.nextCalls++;
      if (err) outcome.error = { status: (err as { status?: unknown }).status, type: (err as { type?: unknown }).type };
      else outcome.body = (req as { body?: unknown }).body ?? "(none)";
      // Answer after a tick, so a second call of next would be counted.
      setImmediate(() => {
        if (!res.headersSent) res.end(JSON.stringify(outcome));
      });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

interface Sent {
  headers: Record<string, string>;
  /** The body in pieces, each written on its own, a few milliseconds apart. */
  pieces: (string | Buffer)[];
}

async function send(port: number, sent: Sent): Promise<Outcome> {
  const req = request({ port, host: "127.0.0.1", method: "POST", path: "/", headers: sent.headers });
  const answer = new Promise<Outcome>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve(JSON.parse(text) as Outcome));
    });
    req.on("error", reject);
  });
  for (const piece of sent.pieces) {
    req.write(piece);
    await new Promise((r) => setTimeout(r, 5));
  }
  req.end();
  return answer;
}

const json = (text: string | Buffer, headers: Record<string, string> = {}): Sent => ({
  headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers },
  pieces: [text],
});

const CASES: [string, Sent][] = [
  ["a plain object", json('{"model":"m","messages":[{"role":"user","content":"héllo"}]}')],
  ["a plain object in three pieces", { ...json('{"a":[1,2,3],"b":"x"}'), pieces: ['{"a":[1,', "2,3],", '"b":"x"}'] }],
  ["an array", json("[1,2]")],
  ["an object after whitespace", json(' \n\t{"a":1}')],
  ["an object after a byte order mark", json(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))],
  ["an empty body", json("")],
  ["malformed JSON", json('{"a":')],
  ["a number (strict mode refuses it)", json("123")],
  ["a string (strict mode refuses it)", json('"x"')],
  ["only whitespace", json("   ")],
  ["charset=utf-8", json('{"a":1}', { "content-type": "application/json; charset=utf-8" })],
  ["charset=UTF-8 with no space", json('{"a":1}', { "content-type": "Application/JSON;charset=UTF-8" })],
  ["a vendor +json type", json('{"a":1}', { "content-type": "application/vnd.api+json" })],
  ["another charset", json('{"a":1}', { "content-type": "application/json; charset=latin1" })],
  ["text/plain", json('{"a":1}', { "content-type": "text/plain" })],
  ["a body past the limit", json(`{"a":"${"x".repeat(2_000)}"}`)],
  ["a gzip body", json(gzipSync('{"zipped":true}'), { "content-encoding": "gzip" })],
  ["an identity content-encoding", json('{"a":1}', { "content-encoding": "identity" })],
  ["a chunked body", { headers: { "content-type": "application/json", "transfer-encoding": "chunked" }, pieces: ['{"a":', "1}"] }],
];

describe("jsonBody: plain bodies read here, the rest by body-parser, with the same outcome", () => {
  let ours: { server: Server; port: number };
  let theirs: { server: Server; port: number };
  beforeAll(async () => {
    ours = await serverWith(jsonBody(LIMIT));
    theirs = await serverWith(express.json({ limit: LIMIT, type: ["application/json", "application/*+json"] }));
  });
  afterAll(() => {
    ours.server.close();
    theirs.server.close();
  });

  it.each(CASES)("%s", async (_what, sent) => {
    const [mine, bodyParsers] = [await send(ours.port, sent), await send(theirs.port, sent)];
    expect(mine).toEqual(bodyParsers);
    expect(mine.nextCalls).toBe(1);
  });

  it("parses what it reads (the cases above are not all errors)", async () => {
    expect(await send(ours.port, json('{"a":[1,{"b":null}]}'))).toEqual({ body: { a: [1, { b: null }] }, nextCalls: 1 });
    expect(await send(ours.port, json('{"a":'))).toMatchObject({ error: { status: 400, type: "entity.parse.failed" } });
  });

  it("reads plain bodies itself and hands the others to body-parser (their refusals are worded apart)", async () => {
    const messages: string[] = [];
    const parse = jsonBody(LIMIT);
    const server = createServer((req, res) =>
      parse(req, res, (err) => {
        messages.push((err as Error | undefined)?.message ?? "no error");
        res.end();
      }),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    const refuse = (sent: Sent) =>
      new Promise<void>((resolve, reject) => {
        const req = request({ port, host: "127.0.0.1", method: "POST", path: "/", headers: sent.headers });
        req.on("response", (res) => res.resume().on("end", resolve)).on("error", reject);
        req.end(sent.pieces[0]);
      });
    await refuse(json("123"));
    await refuse({ headers: { "content-type": "application/json", "transfer-encoding": "chunked" }, pieces: ["123"] });
    server.close();
    expect(messages[0]).toContain("the body must be a JSON object or array");
    expect(messages[1]).not.toContain("the body must be a JSON object or array");
  });

  it("calls next once with an error when the client goes away mid-body, and the server goes on serving", async () => {
    const seen: unknown[] = [];
    const parse = jsonBody(LIMIT);
    const server = createServer((req, res) => parse(req, res, (err) => seen.push(err ?? "no error")));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    const req = request({ port, host: "127.0.0.1", method: "POST", path: "/", headers: { "content-type": "application/json", "content-length": "100" } });
    req.on("error", () => undefined);
    req.write('{"a":');
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ status: 400, type: "request.aborted" });
    server.close();
    expect(await send(ours.port, json('{"after":1}'))).toEqual({ body: { after: 1 }, nextCalls: 1 });
  });

  it("calls next in the async context it was called in (a trace's span), as body-parser does", async () => {
    const context = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const parsers = [jsonBody(LIMIT), express.json({ limit: LIMIT })];
    const server = createServer((req, res) => {
      const parse = parsers[Number(req.url?.slice(1))]!;
      context.run(`request ${req.url}`, () =>
        parse(req, res, () => {
          seen.push(context.getStore());
          res.end("{}");
        }),
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    for (const path of ["/0", "/1"]) {
      // In pieces: the body ends in a later socket read, outside the context the parser was called in.
      await new Promise<void>((resolve, reject) => {
        const req = request({ port, host: "127.0.0.1", method: "POST", path, headers: { "content-type": "application/json", "content-length": "7" } });
        req.on("response", (res) => res.resume().on("end", resolve)).on("error", reject);
        req.write('{"a":');
        setTimeout(() => req.end("1}"), 20);
      });
    }
    server.close();
    expect(seen).toEqual(["request /0", "request /1"]);
  });

  it("refuses a limit that is not a size when built, not at the first request", () => {
    expect(() => jsonBody("lots")).toThrow('option limit "lots" is invalid');
  });
});
