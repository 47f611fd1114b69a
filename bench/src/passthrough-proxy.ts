import { Agent, createServer, request } from "node:http";

/**
 * The floor a Node gateway can reach on this box: a proxy that pipes each request to the upstream
 * over kept-alive connections and pipes the answer back, parsing neither (`BENCH_PEER=passthrough`).
 * Its CPU per request is what the gateway target is set against: one more loopback hop and
 * Node's HTTP server and client, nothing of Router's.
 *   node passthrough-proxy.js <port> <upstream origin>
 */
function main(): void {
  const [portArg, upstreamArg] = process.argv.slice(2);
  const port = Number(portArg);
  if (!Number.isInteger(port) || port <= 0 || !upstreamArg) throw new Error("usage: passthrough-proxy <port> <upstream origin>");
  const upstream = new URL(upstreamArg);
  const agent = new Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 1024 });
  createServer({ keepAliveTimeout: 120_000, noDelay: true }, (req, res) => {
    const forwarded = request(
      { agent, hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(err.message);
    });
    req.pipe(forwarded);
  }).listen(port, "127.0.0.1");
}

main();
