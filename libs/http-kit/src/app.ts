import type { Server } from "node:http";
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type Response } from "express";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { errorBody } from "./envelope";
import { IDENTITY_HEADER, verifyIdentity, type Identity } from "./identity";

export interface HttpAppOptions {
  log: Logger;
  /** JSON body limit; bodies past it get 413. */
  bodyLimit?: string;
}

/** An express app with JSON parsing and no fingerprinting header. Add routes, then `finishApp`. */
export function createHttpApp(opts: HttpAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(express.json({ limit: opts.bodyLimit ?? "10mb", type: ["application/json", "application/*+json"] }));
  return app;
}

/** Adds the 404 route and the one error handler that maps every error to the envelope. */
export function finishApp(app: Express, log: Logger): Express {
  app.use((req: Request, res: Response) => {
    res.status(404).json(errorBody(404, "not_found", `no route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler(log));
  return app;
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const { status, body } = toHttpError(err);
    if (status >= 500) log.error({ err, method: req.method, path: req.path }, "http.request.failed");
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(status).json(body);
  };
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

/** For internal services: requires the gateway-signed identity header and exposes it as `req.identity`. */
export function requireIdentity(secret: string) {
  return (req: Request, _res: Response, next: NextFunction) => {
    req.identity = verifyIdentity(req.header(IDENTITY_HEADER), secret);
    next();
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

/** Listens on `host:port` (port 0 picks one) and resolves once bound. */
export function listen(app: Express, port: number, host = "127.0.0.1"): Promise<RunningHttpServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => {
      if (err) return reject(err);
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
