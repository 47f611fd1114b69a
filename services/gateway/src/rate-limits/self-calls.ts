import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { SELF_CALL_HEADER } from "@router/management-api";
import type { Clock } from "@router/money";
import { z } from "zod";

export { SELF_CALL_HEADER };

/** Long enough for every tool call of one MCP request (a chat completion included), short enough that a leaked token soon counts for nothing. */
export const SELF_CALL_TTL_MS = 120_000;

/** The HKDF info of the token key: this key signs self-call tokens and nothing else. */
const KEY_INFO = "router self-call";
/** Far above any token this gateway issues; a longer header is not read at all. */
const MAX_TOKEN_LENGTH = 512;

const claims = z.strictObject({
  addr: z.string().min(1).max(100),
  /** Epoch milliseconds. */
  exp: z.number().int(),
});

const sign = (key: Buffer, payload: string): Buffer => createHmac("sha256", key).update(payload).digest();

/**
 * Calls of the gateway's routes on behalf of an MCP client: the gateway that forwards `/mcp` to the
 * console issues a token naming the client's address (`x-router-self-call: <base64url(JSON {addr,
 * exp})>.<base64url(HMAC-SHA256)>`), and the console sends it back unchanged with each tool's call.
 * Every replica derives the same key from ROUTER_INTERNAL_SECRET, so whichever one a tool's call
 * reaches counts the per-address limits for that client instead of the console's address. A token
 * that is malformed, forged, tampered with or expired counts for nothing (the header is ignored),
 * never an error.
 */
export class SelfCallTokens {
  private readonly key: Buffer;

  constructor(
    internalSecret: string,
    private readonly clock: Clock,
    private readonly ttlMs = SELF_CALL_TTL_MS,
  ) {
    this.key = Buffer.from(hkdfSync("sha256", Buffer.from(internalSecret, "utf8"), Buffer.alloc(0), KEY_INFO, 32));
  }

  /** A token standing for `clientAddress` until the TTL runs out. */
  issue(clientAddress: string): string {
    const payload = Buffer.from(JSON.stringify({ addr: clientAddress, exp: this.clock.now().getTime() + this.ttlMs })).toString("base64url");
    return `${payload}.${sign(this.key, payload).toString("base64url")}`;
  }

  /** The client address a token stands for; undefined unless it is one of ours and still valid. */
  verify(token: string): string | undefined {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    const parts = token.split(".");
    if (parts.length !== 2) return undefined;
    const [payload = "", signature = ""] = parts;
    // Compared as text: a second spelling of the same bytes is not taken either.
    const given = Buffer.from(signature, "utf8");
    const expected = Buffer.from(sign(this.key, payload).toString("base64url"), "utf8");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
    const checked = claims.safeParse(parsed);
    if (!checked.success || checked.data.exp <= this.clock.now().getTime()) return undefined;
    return checked.data.addr;
  }

  /** The client a self-call stands for; undefined for any other request. */
  clientOf(req: IncomingMessage): string | undefined {
    const token = req.headers[SELF_CALL_HEADER];
    return typeof token === "string" ? this.verify(token) : undefined;
  }
}
