import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FakeReply, FakeUpstream, FakeUpstreamOptions, RecordedRequest } from "./script";

/**
 * One server-sent event as the provider writes it (or one binary frame, for a wire with a
 * `streamContentType` of its own), and whether it carries content.
 */
export interface Frame {
  text: string | Uint8Array;
  content: boolean;
}

/** What a provider route resolved from a request. */
export interface RouteMatch {
  stream: boolean;
  model: string;
}

/** The wire format of one provider family. */
export interface ProviderWire {
  basePath: string;
  /** Returns null when the request is not for this provider's chat route. */
  route(method: string, path: string, query: Record<string, string>, body: unknown): RouteMatch | null;
  /**
   * Returns an error when the request lacks what the real provider demands (e.g. the key header);
   * `body`, when given, is the provider's own error body (else `errorBody` makes one).
   */
  reject?(req: RecordedRequest): Rejection | null | Promise<Rejection | null>;
  errorBody(status: number, code: string | undefined, message: string | undefined): unknown;
  /** Headers an error answer carries beside its body (Bedrock names the error's type in one). */
  errorHeaders?(status: number, code: string | undefined): Record<string, string>;
  /** The stream's content type; default server-sent events. */
  streamContentType?: string;
  json(reply: FakeReply, req: RecordedRequest, model: string): unknown;
  frames(reply: FakeReply, req: RecordedRequest, model: string): Frame[];
  errorFrame(code: string | undefined, message: string | undefined): string | Uint8Array;
  /** Answers a route of the provider's other than chat (e.g. a token count); null when `req` is not one. */
  otherRoute?(req: RecordedRequest): { status: number; body: unknown } | null;
}

export interface Rejection {
  status: number;
  code: string;
  message: string;
  body?: unknown;
}

export const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

const wait = (ms: number | undefined): Promise<void> =>
  ms && ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();

/** Starts a fake provider on loopback that speaks `wire`, scripted per request. */
export async function startFakeProvider(wire: ProviderWire, opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  let defaultReply: FakeReply = opts.defaultReply ?? {};
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const raw = await readBody(req);
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      // kept as text so a test can see what was sent
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
    const query = Object.fromEntries(url.searchParams);
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query,
      headers,
      body,
      rawBody: raw,
      receivedAt: Date.now(),
      clientClosed: false,
    };
    let killed = false;
    const kill = (): void => {
      killed = true;
      req.socket.destroy();
    };
    res.on("close", () => {
      if (!res.writableFinished && !killed) recorded.clientClosed = true;
    });
    const other = wire.otherRoute?.(recorded);
    if (other) {
      requests.push(recorded);
      sendJson(res, other.status, other.body);
      return;
    }
    const match = wire.route(recorded.method, url.pathname, query, body);
    if (!match) {
      sendJson(res, 404, wire.errorBody(404, "not_found", `no route for ${recorded.method} ${url.pathname}`));
      return;
    }
    requests.push(recorded);
    const refusal = await wire.reject?.(recorded);
    if (refusal) {
      sendJson(res, refusal.status, refusal.body ?? wire.errorBody(refusal.status, refusal.code, refusal.message), wire.errorHeaders?.(refusal.status, refusal.code));
      return;
    }
    const reply = queue.shift() ?? defaultReply;
    const failure = reply.failure;
    if (failure?.kind === "reset") {
      kill();
      return;
    }
    if (failure?.kind === "hang") return;
    await wait(reply.headersDelayMs);
    if (failure?.kind === "status") {
      const extra: Record<string, string> = { ...wire.errorHeaders?.(failure.status, failure.code), ...(failure.retryAfter ? { "retry-after": failure.retryAfter } : {}) };
      sendJson(res, failure.status, wire.errorBody(failure.status, failure.code, failure.message), extra);
      return;
    }
    const model = reply.model ?? match.model;
    if (!match.stream) {
      if (failure?.kind === "stall-body") {
        const text = JSON.stringify(wire.json(reply, recorded, model));
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.write(text.slice(0, text.length >> 1));
        return;
      }
      sendJson(res, 200, wire.json(reply, recorded, model));
      return;
    }
    res.writeHead(200, { "content-type": wire.streamContentType ?? "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    const frames = wire.frames(reply, recorded, model);
    // Waiting for each write to reach the socket keeps a later break or stall from discarding it.
    const written = (text: string | Uint8Array) => new Promise<void>((resolve) => res.write(text, () => resolve()));
    let contentSent = 0;
    if (failure?.kind === "stall-before-end") {
      for (const frame of frames.slice(0, -1)) await written(frame.text);
      return;
    }
    for (const frame of frames) {
      if (res.destroyed) return;
      if (frame.content) {
        if (failure?.kind === "empty-stream") break;
        if (
          (failure?.kind === "break-after" || failure?.kind === "stream-error" || failure?.kind === "stall-after") &&
          contentSent >= failure.chunks
        ) {
          if (failure.kind === "break-after") kill();
          else if (failure.kind === "stream-error") res.end(wire.errorFrame(failure.code, failure.message));
          return;
        }
        contentSent++;
      }
      await written(frame.text);
      await wait(reply.chunkDelayMs);
    }
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: origin + wire.basePath,
    origin,
    requests,
    script: (...replies) => void queue.push(...replies),
    setDefault: (reply) => void (defaultReply = reply),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}
