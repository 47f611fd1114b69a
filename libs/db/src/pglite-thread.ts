import { Worker } from "node:worker_threads";

/** What EmbeddedPostgres asks of PGlite: the simple and the extended protocol, and closing. */
export interface PgliteSession {
  exec(sql: string): Promise<Array<{ rows: unknown[]; affectedRows?: number }>>;
  query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
  close(): Promise<void>;
}

export interface PgliteThreadOptions {
  dataDir: string | null;
  /** `postgresqlconf` lines, e.g. `shared_buffers=32MB`. */
  postgresqlconf: string[];
}

type Call = { op: "exec"; sql: string } | { op: "query"; sql: string; params: unknown[] } | { op: "close" };
type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: Record<string, unknown> };

/**
 * The worker's code, run from text (`eval`) so the same file serves the compiled service and the
 * tests that load sources. It opens PGlite, answers each statement in turn, and sends a failed
 * statement's error with its fields (`code`, `detail`, `constraint`...) so callers can read them.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { PGlite } = require(workerData.pglite);
const pg = new PGlite(workerData.dataDir ?? undefined, { parsers: { 20: (v) => BigInt(v) }, postgresqlconf: workerData.postgresqlconf });
const fieldsOf = (err) => {
  const out = { name: err && err.name, message: err && err.message };
  if (err && typeof err === "object") for (const k of Object.keys(err)) {
    const v = err[k];
    if (v === null || ["string", "number", "boolean", "bigint"].includes(typeof v)) out[k] = v;
  }
  return out;
};
pg.waitReady.then(
  () => parentPort.postMessage({ ready: true }),
  (err) => parentPort.postMessage({ ready: false, error: fieldsOf(err) }),
);
parentPort.on("message", async (req) => {
  try {
    let result;
    if (req.op === "exec") result = (await pg.exec(req.sql)).map((r) => ({ rows: r.rows, affectedRows: r.affectedRows }));
    else if (req.op === "query") { const r = await pg.query(req.sql, req.params); result = { rows: r.rows, affectedRows: r.affectedRows }; }
    else { await pg.close(); result = null; }
    parentPort.postMessage({ id: req.id, ok: true, result });
  } catch (err) {
    parentPort.postMessage({ id: req.id, ok: false, error: fieldsOf(err) });
  }
});
`;

/** An error thrown in the worker, rebuilt with the fields it carried (a database error's `code` among them). */
function rebuilt(fields: Record<string, unknown>): Error {
  const err = new Error(typeof fields.message === "string" ? fields.message : "embedded database error");
  Object.assign(err, fields);
  return err;
}

/**
 * PGlite on a worker thread. Its statements run in WASM for as long as they take, and on the main
 * thread they held up every request of the one-process default meanwhile (a record's write, a
 * consumer's batch); on their own thread they run beside the event loop, which only posts each
 * statement and takes its answer.
 */
export class PgliteThread implements PgliteSession {
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextId = 1;
  private exited: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if (reply.ok) waiting.resolve(reply.result);
      else waiting.reject(rebuilt(reply.error));
    });
    const fail = (err: Error) => {
      this.exited = err;
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the embedded database's thread stopped (exit code ${code})`)));
  }

  static async open(opts: PgliteThreadOptions): Promise<PgliteThread> {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pglite: require.resolve("@electric-sql/pglite"), dataDir: opts.dataDir, postgresqlconf: opts.postgresqlconf },
    });
    const ready = await new Promise<{ ready: boolean; error?: Record<string, unknown> }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    if (!ready.ready) {
      await worker.terminate();
      throw rebuilt(ready.error ?? {});
    }
    worker.unref();
    return new PgliteThread(worker);
  }

  private call<T>(req: Call): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    // The thread keeps the process alive only while a statement is out, like a socket would.
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id });
    });
  }

  exec(sql: string): Promise<Array<{ rows: unknown[]; affectedRows?: number }>> {
    return this.call({ op: "exec", sql });
  }

  query<R>(sql: string, params: unknown[] = []): Promise<{ rows: R[]; affectedRows?: number }> {
    return this.call({ op: "query", sql, params });
  }

  async close(): Promise<void> {
    if (!this.exited) await this.call({ op: "close" });
    await this.worker.terminate();
  }
}
