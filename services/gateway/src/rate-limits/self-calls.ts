import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const SELF_CALL_HEADER = "x-router-self-call";

/**
 * Calls the gateway makes to its own routes on behalf of a client (the MCP tools), over loopback
 * HTTP so they run exactly the code a client's call runs. Each carries a one-time random token
 * known only to this process; the per-address rate limits count the client it stands for, not the
 * loopback address. A token nobody registered counts for nothing: the header is then ignored.
 */
export class SelfCalls {
  private readonly clients = new Map<string, string>();

  /** Registers a call for `clientAddress`; `end()` once its answer is in. */
  begin(clientAddress: string): { header: Record<string, string>; end(): void } {
    const token = randomBytes(18).toString("base64url");
    this.clients.set(token, clientAddress);
    return { header: { [SELF_CALL_HEADER]: token }, end: () => this.clients.delete(token) };
  }

  /** The client a self-call stands for; undefined for any other request. */
  clientOf(req: IncomingMessage): string | undefined {
    const token = req.headers[SELF_CALL_HEADER];
    return typeof token === "string" ? this.clients.get(token) : undefined;
  }
}
