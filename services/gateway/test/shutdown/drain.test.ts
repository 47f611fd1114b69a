import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Drain, isShutdown } from "../../src/shutdown/drain";

/** A server whose one route streams until the drain cuts it (as the gateway's requests are cut), and a client that reads it. */
async function streamingServer(drain: Drain) {
  const cut: boolean[] = [];
  const server: Server = createServer(
    drain.track((_req, res) => {
      // As the gateway answers: x-request-id is set on every answer before its head is written.
      res.setHeader("x-request-id", "req-1");
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      res.write("data: first\n\n");
      const request = new AbortController();
      drain.cutsWith(request);
      request.signal.addEventListener("abort", () => {
        cut.push(isShutdown(request.signal));
        res.end("data: cut\n\n");
      });
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  // Resolves once the stream is open, with its whole body to come (wrapped: a promise resolved with
  // a promise would wait for it).
  const open = () =>
    new Promise<{ body: Promise<string> }>((resolve) => {
      request({ port, host: "127.0.0.1", path: "/" }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        resolve({ body: new Promise((done) => res.on("end", () => done(body))) });
      }).end();
    });
  return { server, open, cut };
}

describe("the gateway's drain", () => {
  it("reports the streams it waits for and when its grace ends, and a hurry cuts them at once", async () => {
    const drain = new Drain();
    const { server, open, cut } = await streamingServer(drain);
    try {
      const bodies = [(await open()).body, (await open()).body];
      expect(drain.progress()).toBeUndefined(); // not draining yet
      const started = Date.now();
      const run = drain.run(60_000);
      expect(drain.progress()).toEqual({ streams: 2, requests: 0, graceEndsAt: expect.any(Number) });
      expect(drain.progress()?.graceEndsAt).toBeGreaterThanOrEqual(started + 60_000);

      drain.hurry();
      await expect(run).resolves.toEqual({ cut: 2 });
      expect(Date.now() - started).toBeLessThan(5_000);
      // Cut as at the end of the grace: the gateway's own stop, and each stream ends with its last chunk.
      expect(cut).toEqual([true, true]);
      for (const body of await Promise.all(bodies)) expect(body).toBe("data: first\n\ndata: cut\n\n");
      expect(drain.progress()).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it("aborts the requests it was given when the grace ends, with its own reason, and not those it forgot", async () => {
    const drain = new Drain();
    const { server, open } = await streamingServer(drain);
    try {
      const { body } = await open();
      const inFlight = new AbortController();
      const closed = new AbortController();
      drain.cutsWith(inFlight);
      const forget = drain.cutsWith(closed);
      forget();
      drain.hurry();
      await expect(drain.run(60_000)).resolves.toEqual({ cut: 1 });
      await body;
      expect(inFlight.signal.aborted).toBe(true);
      expect(isShutdown(inFlight.signal)).toBe(true);
      expect(closed.signal.aborted).toBe(false);
      // One that arrives after the cut is cut at once.
      const late = new AbortController();
      drain.cutsWith(late);
      expect(isShutdown(late.signal)).toBe(true);
    } finally {
      server.close();
    }
  });

  it("cuts at once when hurried before it begins (a second signal during an earlier step)", async () => {
    const drain = new Drain();
    const { server, open } = await streamingServer(drain);
    try {
      const { body } = await open();
      drain.hurry();
      const started = Date.now();
      await expect(drain.run(60_000)).resolves.toEqual({ cut: 1 });
      expect(Date.now() - started).toBeLessThan(5_000);
      await expect(body).resolves.toContain("data: cut");
    } finally {
      server.close();
    }
  });
});
