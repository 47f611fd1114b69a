import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type Response } from "express";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { errorBody, type ErrorBody } from "./envelope";
import { IDENTITY_HEADER, verifyIdentity, type Identity, type IdentityPublicKeys } from "./identity";
import { jsonBody } from "./json-body";
import { jsonDepthError } from "./json-depth";

export interface HttpAppOptions {
  log: Logger;
  /** JSON body limit; bodies past it get 413. */
  bodyLimit?: string;
  /** Paths whose routes read their own body (a protocol with its own error for a malformed one). */
  ownBodyPaths?: readonly string[];
  /** JSON body limits of single paths that take more (or less) than `bodyLimit`, by exact path. */
  bodyLimits?: Readonly<Record<string, string>>;
  /**
   * Where each response's `x-request-id` comes from. `echo` (default, internal services): the
   * caller's own when it is a valid id (the gateway forwards its id), else a fresh one. `issue`
   * (the public edge): always a fresh one, written over the caller's so what is forwarded is Router's.
   */
  requestIds?: "echo" | "issue";
}

const DEFAULT_BODY_LIMIT = "10mb";

type BodyParser = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * The one JSON body parser (`jsonBody`: body-parser behind a path for plain bodies): sets
 * `req.body`; bodies past `limit` fail with 413, and bodies nested deeper than `MAX_JSON_DEPTH` with
 * a 400 naming the field.
 */
export function jsonBodyParser(limit = DEFAULT_BODY_LIMIT): BodyParser {
  const parse = jsonBody(limit);
  return (req, res, next) =>
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      const tooDeep = jsonDepthError((req as { body?: unknown }).body);
      next(tooDeep ?? undefined);
    });
}

export const REQUEST_ID_HEADER = "x-request-id";
/** What an echoed request id may look like: visible, header-safe, short. */
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A request id for a response that has no generation id. */
export const newRequestId = (): string => `req-${randomUUID()}`;

/** The `x-request-id` already given to this response, for logs. */
export function requestIdOf(res: ServerResponse): string | undefined {
  const id = res.getHeader(REQUEST_ID_HEADER);
  return typeof id === "string" ? id : undefined;
}

/** Gives every response an `x-request-id` (`HttpAppOptions.requestIds`). */
function requestIds(mode: "echo" | "issue"): BodyParser {
  return (req, res, next) => {
    const given = req.headers[REQUEST_ID_HEADER];
    let id: string;
    if (mode === "echo" && typeof given === "string" && REQUEST_ID.test(given)) id = given;
    else {
      id = newRequestId();
      req.headers[REQUEST_ID_HEADER] = id;
    }
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}

/** An express app with JSON parsing and no fingerprinting header. Add routes, then `finishApp`. */
export function createHttpApp(opts: HttpAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestIds(opts.requestIds ?? "echo"));
  const parseJson = jsonBodyParser(opts.bodyLimit);
  const own = new Set(opts.ownBodyPaths ?? []);
  const parsers = new Map(Object.entries(opts.bodyLimits ?? {}).map(([path, limit]) => [path, jsonBodyParser(limit)]));
  app.use(
    own.size === 0 && parsers.size === 0
      ? parseJson
      : (req, res, next) => (own.has(req.path) ? next() : (parsers.get(req.path) ?? parseJson)(req, res, next)),
  );
  return app;
}

/**
 * Whether sending the same request again can succeed, as the `x-should-retry` header tells the
 * OpenAI and Anthropic SDKs and Claude Code (they read it before their own status rules, which retry
 * 409 and, in Claude Code, a 401 for minutes): yes for a timeout, 429 and 5xx; no for any other 4xx.
 */
export function shouldRetry(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The `x-should-retry` header of an error status; none for a success. */
export function retryHeader(status: number): Record<string, string> {
  return status >= 400 ? { "x-should-retry": String(shouldRetry(status)) } : {};
}

/** Writes `body` as the JSON response, as express's `res.json` does, on Node's own response; an error says whether to retry. */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...retryHeader(status),
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Answers a thrown error with the envelope (`toHttpError`); a response already begun is ended.
 * `shape` re-dresses the envelope for a route that answers in another API's error format.
 */
export function writeHttpError(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  log: Logger,
  shape?: (error: ErrorBody["error"]) => unknown,
): void {
  const { status, body } = toHttpError(err);
  if (status >= 500) log.error({ err, requestId: requestIdOf(res), status, method: req.method, path: req.url?.split("?")[0] }, "http.request.failed");
  if (res.headersSent) {
    res.end();
    return;
  }
  writeJson(res, status, shape ? shape(body.error) : body);
}

/**
 * Serves the hot routes on Node's request and response directly, ahead of the express app, which
 * gets every other request. Matches as express would: any letter case, an optional trailing slash,
 * any query string.
 */
export function routeAhead(routes: AheadRoute | AheadRoute[], app: RequestListener): RequestListener {
  const list = (Array.isArray(routes) ? routes : [routes]).map((r) => ({ ...r, lower: r.path.toLowerCase() }));
  return (req, res) => {
    const url = req.url ?? "";
    const end = url.indexOf("?");
    let p = end < 0 ? url : url.slice(0, end);
    if (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
    for (const route of list) {
      if (req.method === route.method && (p === route.path || p.toLowerCase() === route.lower)) return route.listener(req, res);
    }
    app(req, res);
  };
}

/** A route `routeAhead` serves on Node's own request and response. */
export interface AheadRoute {
  method: string;
  path: string;
  listener: RequestListener;
}

/** Adds the 404 route and the one error handler that maps every error to the envelope. */
export function finishApp(app: Express, log: Logger): Express {
  app.use((req: Request, res: Response) => {
    writeJson(res, 404, errorBody(404, "not_found", `no route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler(log));
  return app;
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => writeHttpError(req, res, err, log);
}

/** The one table from thrown errors to HTTP status and envelope. */
export function toHttpError(err: unknown): { status: number; body: ReturnType<typeof errorBody> } {
  if (err instanceof DomainError) {
    return { status: err.status, body: errorBody(err.status, err.code, err.message, err.details) };
  }
  const e = err as BodyParserError;
  if (e?.type === "entity.parse.failed") {
    return { status: 400, body: errorBody(400, "invalid_request", "body: malformed JSON") };
  }
  if (e?.type === "entity.too.large") {
    return { status: 413, body: errorBody(413, "payload_too_large", "body: request body is too large") };
  }
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") {
    return { status: 415, body: errorBody(415, "invalid_request", "body: unsupported encoding") };
  }
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return { status: e.status, body: errorBody(e.status, "invalid_request", e.message) };
  }
  return { status: 500, body: errorBody(500, "internal", "internal error") };
}

declare module "express-serve-static-core" {
  interface Request {
    identity?: Identity;
  }
}

/**
 * For internal services: requires the identity header the gateway signed, verified with the edge's
 * public keys, and exposes it as `req.identity`.
 */
export function requireIdentity(publicKeys: IdentityPublicKeys) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    verifyIdentity(req.header(IDENTITY_HEADER), publicKeys).then((identity) => {
      req.identity = identity;
      next();
    }, next);
  };
}

export function identityOf(req: Request): Identity {
  if (!req.identity) throw new DomainError("unauthorized", "missing identity context");
  return req.identity;
}

export interface RunningHttpServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Listens on `host:port` (port 0 picks one) and resolves once bound; `listener` is an express app or `routeAhead`'s. */
export function listen(listener: RequestListener, port: number, host = "127.0.0.1"): Promise<RunningHttpServer> {
  return new Promise((resolve, reject) => {
    const server = createServer(listener);
    server.listen(port, host, () => {
      const addr = server.address();
      const bound = typeof addr === "object" && addr ? addr.port : port;
      resolve({
        server,
        port: bound,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
    server.keepAliveTimeout = 65_000;
    server.on("error", reject);
  });
}
