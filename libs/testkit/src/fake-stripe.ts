import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for the payment processor's (Stripe's) API on loopback: answers
 * `GET /v1/checkout/sessions/{id}` with the session stored under that id (expansions included, as
 * the test stores them) in Stripe's wire format, and 404 with Stripe's error body otherwise. Every
 * request is kept as `METHOD url authorization`.
 */
export class FakeStripeApi {
  readonly sessions = new Map<string, Record<string, unknown>>();
  readonly requests: string[] = [];
  private server: Server | undefined;
  url = "";

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ""}`);
      const id = /^\/v1\/checkout\/sessions\/([^/?]+)/.exec(req.url ?? "")?.[1];
      const session = req.method === "GET" && id ? this.sessions.get(decodeURIComponent(id)) : undefined;
      res.writeHead(session ? 200 : 404, { "content-type": "application/json", "request-id": "req_fake" });
      res.end(JSON.stringify(session ?? { error: { type: "invalid_request_error", message: "No such checkout.session" } }));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
