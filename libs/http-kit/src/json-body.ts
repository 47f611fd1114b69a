import type { IncomingMessage, ServerResponse } from "node:http";
import bytes from "bytes";
import express from "express";
import { utf8Text } from "./body-text";

type Next = (err?: unknown) => void;

/** The error body-parser gives for the same fault, so `toHttpError` answers both alike. */
class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads a JSON body into `req.body`. The plain case, a UTF-8 `application/json` body of a declared
 * length within `limit`, not compressed, is read here: its chunks gathered, parsed once. Every other
 * body (chunked, compressed, another charset or media type, too large) goes to body-parser, which
 * answers each case. The plain case is every inference request the SDKs send, and body-parser's
 * general path (type-is, raw-body, iconv-lite, its error handling) cost it several times the parse.
 */
export function jsonBody(limit: string): (req: IncomingMessage, res: ServerResponse, next: Next) => void {
  const general = express.json({ limit, type: ["application/json", "application/*+json"] });
  // body-parser has refused a limit that is not a size.
  const maxBytes = bytes.parse(limit) as number;
  return (req, res, next) => {
    const length = plainJsonLength(req);
    if (length === null || length > maxBytes || req.readableEnded) return general(req, res, next);
    // Chained here, `next` runs in the request's async context (its trace span), not the socket's
    // that ends the body. body-parser's reader binds an async resource for that, which costs more.
    readPlain(req, length).then(() => next(), next);
  };
}

/** The declared length of a plain JSON body (see `jsonBody`); null when the body is not plain. */
function plainJsonLength(req: IncomingMessage): number | null {
  const h = req.headers;
  if (h["transfer-encoding"] !== undefined) return null;
  const encoding = h["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return null;
  const type = h["content-type"];
  if (type === undefined || !isPlainJsonType(type)) return null;
  const declared = h["content-length"];
  if (declared === undefined || !/^\d{1,15}$/.test(declared)) return null;
  return Number(declared);
}

const PLAIN_JSON_TYPES = new Set(["application/json", "application/json; charset=utf-8", "application/json;charset=utf-8"]);

function isPlainJsonType(type: string): boolean {
  return PLAIN_JSON_TYPES.has(type.toLowerCase());
}

/** Sets `req.body`; rejects with body-parser's error for the same fault. */
function readPlain(req: IncomingMessage, length: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const settle = (err?: BodyError): void => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = (): void => {
      if (received !== length) return settle(new BodyError(400, "request.size.invalid", "request size did not match content length"));
      try {
        (req as { body?: unknown }).body = parseStrict(utf8Text(chunks, received));
      } catch (err) {
        return settle(new BodyError(400, "entity.parse.failed", (err as Error).message));
      }
      settle();
    };
    const onError = (err: Error): void => settle(new BodyError(400, "request.aborted", err.message));
    // Closed before its end: the client went away mid-body.
    const onClose = (): void => settle(new BodyError(400, "request.aborted", "request aborted"));
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

const JSON_WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/** As body-parser's strict mode: an empty body is `{}`, and only an object or an array is taken. */
function parseStrict(text: string): unknown {
  if (text.length === 0) return {};
  let at = 0;
  while (at < text.length && JSON_WHITESPACE.has(text[at] as string)) at++;
  const first = text[at];
  if (first !== "{" && first !== "[") throw new SyntaxError(`Unexpected token ${first ? `'${first}'` : "end of input"}: the body must be a JSON object or array`);
  return JSON.parse(text) as unknown;
}
