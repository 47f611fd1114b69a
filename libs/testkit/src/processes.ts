import { spawn, type ChildProcess } from "node:child_process";
import { connect, createServer } from "node:net";

/** A free TCP port on loopback, for services started as separate processes. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
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
