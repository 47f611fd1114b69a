import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";

/** One request a receiver got: the raw body as text, headers lower-cased. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** How the receiver answers one request: a status (and headers), or `hang` to never answer. */
export type ReceiverReply = { status: number; headers?: Record<string, string>; body?: string } | "hang";

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The receiver's self-signed certificate (PEM): trust it as a CA. */
  ca: string;
  /** The same certificate in a file, for `ROUTER_OUTBOUND_CA_FILE` of a child process. */
  caFile: string;
  /** Every request so far, in arrival order. */
  requests: ReceivedRequest[];
  /** Replaces how the receiver answers; `n` counts requests from 1. */
  respondWith(reply: (req: ReceivedRequest, n: number) => ReceiverReply): void;
  close(): Promise<void>;
}

/**
 * A real HTTPS server on loopback with a fresh self-signed certificate (for 127.0.0.1, ::1,
 * localhost and `names`), recording every request; answers 200 unless told otherwise. Stands in
 * for webhook and chat receivers.
 */
export async function startHttpsReceiver(opts: { names?: string[] } = {}): Promise<HttpsReceiver> {
  const pems = await generate([{ name: "commonName", value: "router-test-receiver" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
          { type: 2, value: "localhost" },
          ...(opts.names ?? []).map((value) => ({ type: 2 as const, value })),
        ],
      },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), "router-receiver-"));
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, pems.cert);

  const requests: ReceivedRequest[] = [];
  let reply: (req: ReceivedRequest, n: number) => ReceiverReply = () => ({ status: 200 });
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(received);
      const answer = reply(received, requests.length);
      if (answer === "hang") return;
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    ca: pems.cert,
    caFile,
    requests,
    respondWith(next) {
      reply = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
