import type { IncomingHttpHeaders } from "node:http";
import { pipeline } from "node:stream/promises";
import type { Request, Response } from "express";
import { Agent, request } from "undici";
import { DomainError } from "@router/errors";
import { EVICT_KEYS_HEADER, EVICT_SESSIONS_HEADER, IDENTITY_HEADER } from "@router/http-kit";
import type { Logger } from "@router/logging";

/** An internal service the gateway forwards management routes to. */
export interface UpstreamTarget {
  /** Service name, used in the `router.<service>_unavailable` code. */
  service: string;
  baseUrl: string;
  /** Request headers passed on besides the usual ones (a payment processor's signature header). */
  passHeaders?: readonly string[];
  /** Headers the gateway itself adds (the self-call token of a forwarded `/mcp`). */
  addHeaders?: Readonly<Record<string, string>>;
  /** Called with the owner's answer headers before anything is passed on (the console's cache evictions). */
  onAnswer?: (headers: IncomingHttpHeaders) => Promise<void>;
}

// Request headers passed on. Everything else (Authorization, cookies, hop-by-hop headers) stays
// here: internal services trust the signed identity header, never the caller's credential.
const FORWARDED_REQUEST_HEADERS = [
  "accept",
  "accept-encoding",
  "accept-language",
  "content-type",
  "if-none-match",
  "user-agent",
  "x-request-id",
];
// Hop-by-hop headers, and the owner's messages to the gateway itself.
const NOT_PASSED_ON = new Set([
  EVICT_KEYS_HEADER,
  EVICT_SESSIONS_HEADER,
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function requestBody(req: Request): string | Request | undefined {
  if (req.method === "GET" || req.method === "HEAD") return undefined;
  // express.json already consumed JSON bodies; anything else is still a readable stream.
  if (req.body !== undefined && req.readableEnded) return JSON.stringify(req.body);
  return req;
}

// setHeader, not res.set: express would append a charset to the owner's content-type.
function copyResponseHeaders(headers: IncomingHttpHeaders, res: Response): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !NOT_PASSED_ON.has(name.toLowerCase())) res.setHeader(name, value);
  }
}

function unavailable(target: UpstreamTarget, cause: unknown): DomainError {
  return new DomainError(`router.${target.service}_unavailable`, `the ${target.service} service is unavailable`, { status: 503, cause });
}

/**
 * Forwards requests to internal services over one keep-alive connection pool and streams the
 * answer back as it arrives (CSV exports are large). An unreachable or silent service is a 503
 * `router.<service>_unavailable`; a client that goes away aborts the upstream request.
 */
export class UpstreamProxy {
  private readonly agent: Agent;

  constructor(private readonly log: Logger, opts: { connectionsPerService?: number; headersTimeoutMs?: number } = {}) {
    this.agent = new Agent({
      connections: opts.connectionsPerService ?? 64,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.headersTimeoutMs ?? 30_000,
      bodyTimeout: 120_000,
    });
  }

  async forward(req: Request, res: Response, target: UpstreamTarget, identity: string | null): Promise<void> {
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.on("close", onClose);
    let upstream: Awaited<ReturnType<typeof request>>;
    try {
      upstream = await this.send(req, target, identity, abort.signal);
    } catch (err) {
      res.off("close", onClose);
      if (abort.signal.aborted) return;
      throw err;
    }
    // Before the client sees the answer: its next request must not find what the change made stale.
    if (target.onAnswer) await target.onAnswer(upstream.headers);
    res.status(upstream.statusCode);
    copyResponseHeaders(upstream.headers, res);
    try {
      await pipeline(upstream.body, res);
    } catch (err) {
      // Headers are gone by now; all that is left is to cut the response short.
      if (!abort.signal.aborted) this.log.warn({ err, service: target.service, path: req.path }, "gateway.proxy.stream_failed");
      res.destroy();
    } finally {
      res.off("close", onClose);
    }
  }

  /**
   * Sends the request as `forward` does and reads the whole answer as JSON, for a route that adds to
   * what the owner answers. An answer that is not JSON is a 503 like an unreachable owner.
   */
  async fetchJson(req: Request, target: UpstreamTarget, identity: string): Promise<{ status: number; body: unknown }> {
    const upstream = await this.send(req, target, identity);
    try {
      return { status: upstream.statusCode, body: await upstream.body.json() };
    } catch (err) {
      this.log.warn({ err, service: target.service, path: req.path }, "gateway.proxy.upstream_failed");
      throw unavailable(target, err);
    }
  }

  private async send(req: Request, target: UpstreamTarget, identity: string | null, signal?: AbortSignal) {
    const headers: Record<string, string> = {};
    for (const name of [...FORWARDED_REQUEST_HEADERS, ...(target.passHeaders ?? [])]) {
      const value = req.header(name);
      if (value !== undefined) headers[name] = value;
    }
    if (typeof req.body === "object" && req.body !== null && req.readableEnded) headers["content-type"] = "application/json";
    if (identity) headers[IDENTITY_HEADER] = identity;
    Object.assign(headers, target.addHeaders);
    if (req.ip) headers["x-forwarded-for"] = req.ip;
    headers["x-forwarded-proto"] = req.protocol;
    // The host the client addressed: the console sets its session cookies Secure on any but a local one.
    if (req.headers.host) headers["x-forwarded-host"] = req.headers.host;
    const url = `${target.baseUrl.replace(/\/+$/, "")}${req.originalUrl}`;
    try {
      return await request(url, { method: req.method as "GET", headers, body: requestBody(req), dispatcher: this.agent, signal });
    } catch (err) {
      if (!signal?.aborted) this.log.warn({ err, service: target.service, path: req.path }, "gateway.proxy.upstream_failed");
      throw unavailable(target, err);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
