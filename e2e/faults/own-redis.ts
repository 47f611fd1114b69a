import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, tcpReady, waitFor } from "@router/testkit";

/**
 * A redis-server of the suite's own, on a free port with its append-only file in a temporary
 * directory, so the suite can kill it without touching the Redis other tests share, and bring it
 * back with what it had acknowledged.
 */
export interface OwnRedis {
  url: string;
  /** SIGKILL: no shutdown save, only what the append-only file already holds survives. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it answers. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "router-fault-redis-"));
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--appendonly", "yes", "--dir", dir, "--save", ""], {
      stdio: "ignore",
    });
    child = proc;
    await waitFor(async () => proc.exitCode === null && (await tcpReady(port)), { timeoutMs: 10_000, what: `redis-server on ${port}` });
  };
  const kill = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = once(proc, "exit");
    proc.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
