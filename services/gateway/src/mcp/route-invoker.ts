import type { IncomingMessage } from "node:http";
import type { SelfCalls } from "../rate-limits/self-calls";

export interface InvokedRoute {
  status: number;
  /** The response body as text (JSON for every route an MCP tool adapts). */
  body: string;
}

/** The caller's request headers a route needs to see the same caller. */
const CARRIED_HEADERS = ["authorization", "user-agent", "http-referer", "x-title"] as const;

export interface RouteInvokerDeps {
  /** This gateway's own base URL on loopback (known once it listens). */
  baseUrl: () => string;
  selfCalls: SelfCalls;
  /** The client address the MCP request counts for. */
  addressOf: (req: IncomingMessage) => string;
}

/**
 * Calls one of the gateway's own routes as the MCP caller, over loopback HTTP to this same process:
 * the tool then passes the same authentication, rate limits, ceilings, routing and ledger as a client
 * of that route, because it runs the same code (an in-process request object would skip the HTTP
 * layer's parsing and limits, or need a copy of them). Per-address limits count the MCP caller's
 * address (`SelfCalls`).
 */
export class RouteInvoker {
  constructor(private readonly deps: RouteInvokerDeps) {}

  async invoke(caller: IncomingMessage, route: { method: "GET" | "POST"; path: string; body?: unknown }): Promise<InvokedRoute> {
    const call = this.deps.selfCalls.begin(this.deps.addressOf(caller));
    try {
      const headers: Record<string, string> = { ...call.header };
      for (const name of CARRIED_HEADERS) {
        const value = caller.headers[name];
        if (typeof value === "string") headers[name] = value;
      }
      if (route.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${this.deps.baseUrl()}${route.path}`, {
        method: route.method,
        headers,
        body: route.body === undefined ? undefined : JSON.stringify(route.body),
        redirect: "manual",
      });
      return { status: res.status, body: await res.text() };
    } finally {
      call.end();
    }
  }
}
