import { spawn, type ChildProcess } from "node:child_process";
import { randomInt } from "node:crypto";
import { connect, createServer } from "node:net";

/**
 * Ports for services started as separate processes come from a range below the kernel's ephemeral
 * range (32768-60999 on Linux), split into one block per jest worker, and are never handed out twice
 * by one process. A port the kernel picked (`listen(0)`) could be picked again for the next service
 * of the same stack or taken by an outgoing connection before the child binds it; the child then
 * fails to start while another server answers its readiness check (an alerts server answering the
 * gateway's `/health`, and the test's calls with 401). The range starts above 10080, the highest
 * port that fetch refuses to call (the Fetch standard's "bad ports").
 */
const PORT_RANGE_START = 11_000;
const PORT_BLOCK = 2_000;
const PORT_BLOCKS = 10;
const handedOut = new Set<number>();
let cursor = randomInt(PORT_BLOCK);

function portBlockStart(): number {
  const worker = Number(process.env.JEST_WORKER_ID);
  const block = Number.isInteger(worker) && worker >= 1 ? (worker - 1) % PORT_BLOCKS : process.pid % PORT_BLOCKS;
  return PORT_RANGE_START + block * PORT_BLOCK;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A free TCP port on loopback, for a service started as a separate process. */
export async function freePort(): Promise<number> {
  const start = portBlockStart();
  for (let tried = 0; tried < PORT_BLOCK; tried++) {
    const port = start + (cursor++ % PORT_BLOCK);
    // Once the block wraps, a port handed out long ago is used again if nothing listens on it.
    if (handedOut.has(port) && handedOut.size < PORT_BLOCK) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${start}-${start + PORT_BLOCK - 1}`);
}

export interface ChildService {
  name: string;
  child: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node <script>` with `env` and resolves once `ready()` answers true. `script` may be a
 * list: the script, then its arguments (a server that takes its port only as `--port=`).
 */
export async function startNodeProcess(
  name: string,
  script: string | [script: string, ...args: string[]],
  env: Record<string, string>,
  ready: () => Promise<boolean>,
  timeoutMs = 20_000,
  nodeArgs: string[] = [],
  /** Run as this user and group (needs root), as a container image's USER would. */
  user?: { uid: number; gid: number },
): Promise<ChildService> {
  const child = spawn(process.execPath, [...nodeArgs, ...(typeof script === "string" ? [script] : script)], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...user,
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  let exited = false;
  child.on("exit", () => (exited = true));
  const service: ChildService = {
    name,
    child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`${name} exited during start:\n${out}`);
    if (await ready().catch(() => false)) return service;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${name} did not become ready in ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves true when an HTTP GET of `url` answers with any status below 500. */
export async function httpReady(url: string): Promise<boolean> {
  const res = await fetch(url).catch(() => null);
  return res !== null && res.status < 500;
}

/** Resolves true when a TCP connection to host:port opens. */
export function tcpReady(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, host);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
