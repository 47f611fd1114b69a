import type { IncomingMessage } from "node:http";
import { MCP_CALLER_HEADERS, SELF_CALL_HEADER } from "@router/management-api";

export interface InvokedRoute {
  status: number;
  /** The response body as text (JSON for every route an MCP tool adapts). */
  body: string;
}

/** The forwarded request's headers a tool's call carries: the caller's own, and the gateway's self-call token. */
const CARRIED_HEADERS = [...MCP_CALLER_HEADERS, SELF_CALL_HEADER] as const;

export interface RouteInvokerDeps {
  /** The gateway's base URL (read on each call: the one-process runner knows it once the gateway listens). */
  baseUrl: () => string;
}

/**
 * Calls one of the gateway's routes as the MCP caller, over HTTP: the tool then passes the same
 * authentication, rate limits, ceilings, routing and ledger as a client of that route, because it
 * runs the same code. The self-call token the gateway added when it forwarded `/mcp` goes back
 * unchanged (this service cannot read or make one): any gateway replica counts per-address limits
 * for the MCP client, not for this service.
 */
export class RouteInvoker {
  constructor(private readonly deps: RouteInvokerDeps) {}

  async invoke(caller: IncomingMessage, route: { method: "GET" | "POST"; path: string; body?: unknown }): Promise<InvokedRoute> {
    const headers: Record<string, string> = {};
    for (const name of CARRIED_HEADERS) {
      const value = caller.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    if (route.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${this.deps.baseUrl().replace(/\/+$/, "")}${route.path}`, {
      method: route.method,
      headers,
      body: route.body === undefined ? undefined : JSON.stringify(route.body),
      redirect: "manual",
    });
    return { status: res.status, body: await res.text() };
  }
}
