import { fork, type ChildProcess } from "node:child_process";
import { createServer, connect, type Socket } from "node:net";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "pg";
import { TEST_POSTGRES_ADMIN_URL } from "@router/testkit";
import { cpuPerRequest, sampleCpu } from "./cpu";

/**
 * What one hop costs on this box: the CPU a process spends to take one small message, answer it and
 * wait for the next. Two Node processes trade 300-byte messages over loopback TCP, and a Node client
 * sends Postgres a prepared one-row statement, first back to back (neither side sleeps), then one
 * every `BENCH_HOP_GAP_MS` (default 3.33 ms, a request's spacing at 300/s), so that each side sleeps
 * between messages as the stack's processes do under `make bench`'s load. A hop of the request path
 * costs its answerer at least the gapped figure, before any work of its own. Not a test.
 */
const MESSAGE = Buffer.alloc(300, 0x61);
const BUSY_TRIPS = 20_000;
const GAPPED_TRIPS = 3_000;

function gapMs(): number {
  const raw = process.env.BENCH_HOP_GAP_MS ?? "3.33";
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0) throw new Error(`BENCH_HOP_GAP_MS must be milliseconds above 0, got "${raw}"`);
  return ms;
}

/** The forked side: echoes every message on one loopback connection; its port goes back over IPC. */
function serveEcho(): void {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on("data", () => socket.write(MESSAGE));
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    if (address && typeof address === "object") process.send?.(address.port);
  });
  process.on("disconnect", () => process.exit(0));
}

/** `trips` round trips through `ask`, `gap` ms apart (0: the next as soon as the answer is in). */
async function roundTrips(trips: number, gap: number, ask: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < trips; i++) {
    await ask(i);
    if (gap > 0) await sleep(gap);
  }
}

/** CPU µs per round trip of each process in `pids`. */
async function measure(pids: Record<string, number>, trips: number, gap: number, ask: (i: number) => Promise<void>): Promise<Record<string, number>> {
  const subjects = { pids, commands: {} };
  await roundTrips(500, gap === 0 ? 0 : 1, ask); // warm-up
  const before = sampleCpu(subjects);
  await roundTrips(trips, gap, ask);
  const msPerTrip = cpuPerRequest(before, sampleCpu(subjects), trips);
  return Object.fromEntries(Object.entries(msPerTrip).map(([name, ms]) => [name, Math.round(ms * 1000)]));
}

async function echoPeer(): Promise<{ child: ChildProcess; socket: Socket }> {
  const child = fork(__filename, ["echo"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const [port] = (await once(child, "message")) as [number];
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  await once(socket, "connect");
  return { child, socket };
}

function asker(socket: Socket): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      socket.once("data", () => resolve());
      socket.write(MESSAGE);
    });
}

async function main(): Promise<void> {
  const gap = gapMs();
  const rows: Array<{ what: string; busy: Record<string, number>; gapped: Record<string, number> }> = [];

  const { child, socket } = await echoPeer();
  try {
    const pids = { caller: process.pid, answerer: child.pid! };
    const ask = asker(socket);
    rows.push({
      what: "Node to Node, loopback TCP",
      busy: await measure(pids, BUSY_TRIPS, 0, ask),
      gapped: await measure(pids, GAPPED_TRIPS, gap, ask),
    });
  } finally {
    socket.destroy();
    child.disconnect();
  }

  const pg = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
  await pg.connect();
  try {
    const backend = (await pg.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const pids = { caller: process.pid, answerer: backend };
    const ask = async (i: number): Promise<void> => {
      await pg.query({ name: "hop_cost", text: "SELECT $1::int AS n", values: [i] });
    };
    rows.push({
      what: "Node to Postgres, one prepared statement",
      busy: await measure(pids, BUSY_TRIPS, 0, ask),
      gapped: await measure(pids, GAPPED_TRIPS, gap, ask),
    });
  } finally {
    await pg.end();
  }

  process.stdout.write(`\nCPU µs per round trip, back to back and one every ${gap} ms (user + system, from /proc)\n`);
  process.stdout.write(`${"".padEnd(44)}${"caller".padStart(22)}${"answerer".padStart(22)}\n`);
  for (const r of rows) {
    const cell = (name: string): string => `${r.busy[name] ?? "?"} → ${r.gapped[name] ?? "?"}`.padStart(22);
    process.stdout.write(`${r.what.padEnd(44)}${cell("caller")}${cell("answerer")}\n`);
  }
  process.stdout.write("The caller's gapped figure includes its timer; the answerer's is one wake-up, one answer.\n");
}

if (process.argv[2] === "echo") serveEcho();
else
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
