import { createReadStream } from "node:fs";
import { appendFile, mkdir, open, readdir, readFile, rename, rm, stat, truncate, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "@router/logging";
import { within } from "./deadline";
import type { Envelope } from "./envelope";
import type { BusSettings } from "./settings";
import { Waker } from "./waker";

export interface OutboxOptions {
  dir: string;
  log: Logger;
  /** Pause between attempts while the broker is away. */
  retryMs: number;
  /** How long one send may take before the broker counts as away. */
  timeoutMs: number;
  /** Sends one event to the broker and resolves once the broker acknowledged it. */
  send(envelope: Envelope): Promise<void>;
  /**
   * What a failed send means: `unreachable`, the broker is away (the event is kept and retried);
   * `refused`, the broker refused this event itself (set aside); `broken`, no retry can fix it (an
   * error from code): the event is kept, the outbox stops sending and `onBroken` is called.
   */
  failureOf(err: unknown): SendFailure;
  /** Called once when the outbox stopped on a `broken` failure (the bus's `onFatal`). */
  onBroken(err: unknown): void;
}

export type SendFailure = "unreachable" | "refused" | "broken";

const ACTIVE = "active.log";
const CURSOR = "cursor.json";
const LOCK = "outbox.lock";
const REJECTED = "rejected.log";
const SEGMENT = /^segment-(\d{10})\.log$/;
const CURSOR_EVERY = 100;
const LOG_APPENDED_EVERY = 1000;

// Directories opened by this process: a second bus on one directory would interleave two logs.
const openDirs = new Set<string>();

interface StoredRecord {
  id: string;
  topic: string;
  key: string;
  type: string;
  headers: Record<string, string>;
  payload: string;
}

interface Cursor {
  segment: string;
  offset: number;
}

/**
 * The durable outbox: events the broker could not take, in publish order, in append-only files
 * (one JSON line per event, fsynced before `append` resolves). Appends go to `active.log`; the
 * drain loop renames it to a numbered segment, sends the segment in order, records its progress in
 * `cursor.json` and deletes the segment when done. A crash mid-drain resends at most the events
 * after the last cursor write (consumers are idempotent). A torn last line (crash mid-append) was
 * never acknowledged to the publisher and is cut off on open.
 */
export class Outbox {
  private pending = 0;
  private fd: FileHandle | undefined;
  private serial: Promise<unknown> = Promise.resolve();
  private draining: Promise<void> | undefined;
  private closed = false;
  private readonly waker = new Waker();
  private appendedSinceEmpty = 0;
  private nextSegment = 1;
  /** Set once a send failed in a way no retry fixes: events are kept on disk, nothing more is sent. */
  private stopped = false;
  private stopReported = false;

  private constructor(
    private readonly dir: string,
    private readonly opts: OutboxOptions,
  ) {}

  /** The outbox of a broker adapter, with the directory and timings of the bus settings. */
  static forBroker(
    settings: Pick<BusSettings, "outboxDir" | "outboxRetryMs" | "publishTimeoutMs">,
    log: Logger,
    broker: Pick<OutboxOptions, "send" | "failureOf" | "onBroken">,
  ): Promise<Outbox> {
    return Outbox.open({
      dir: settings.outboxDir,
      log,
      retryMs: settings.outboxRetryMs,
      timeoutMs: settings.publishTimeoutMs,
      ...broker,
    });
  }

  /** Opens (and locks) the outbox directory; starts sending what a previous run left behind. */
  static async open(opts: OutboxOptions): Promise<Outbox> {
    const dir = path.resolve(opts.dir);
    if (openDirs.has(dir)) throw new Error(`outbox ${dir} is already open in this process`);
    await mkdir(dir, { recursive: true });
    await lock(dir);
    openDirs.add(dir);
    const outbox = new Outbox(dir, opts);
    try {
      await outbox.recover();
    } catch (err) {
      openDirs.delete(dir);
      await rm(path.join(dir, LOCK), { force: true });
      throw err;
    }
    if (outbox.pending > 0) {
      opts.log.warn({ pending: outbox.pending }, "bus.outbox.recovered");
      outbox.kick();
    }
    return outbox;
  }

  /** True while events wait in the outbox: later events must queue behind them to keep their order. */
  hasPending(): boolean {
    return this.pending > 0;
  }

  /**
   * Sends the event now, or keeps it when the broker is away (or events wait already, so a key's
   * events keep their order). Resolves once the broker or the disk has it; rejects when the broker
   * refused the event itself.
   */
  async publish(envelope: Envelope): Promise<void> {
    if (this.closed) throw new Error("the outbox is closed");
    if (this.hasPending() || this.stopped) return this.append(envelope);
    try {
      await this.sendOnce(envelope);
    } catch (err) {
      const failure = this.opts.failureOf(err);
      if (failure === "refused") throw err;
      if (failure === "unreachable") {
        this.opts.log.warn({ err, topic: envelope.topic }, "bus.publish.deferred");
        await this.append(envelope);
        return;
      }
      this.stopped = true;
      await this.append(envelope);
      this.stop(err);
    }
  }

  /**
   * No retry fixes `err`: everything stays on disk for the next start and nothing more is sent
   * (publishes are appended); reported once, once the event that met it is on disk.
   */
  private stop(err: unknown): void {
    this.stopped = true;
    this.waker.wake();
    if (this.stopReported) return;
    this.stopReported = true;
    this.opts.log.fatal({ err, pending: this.pending }, "bus.outbox.stopped");
    this.opts.onBroken(err);
  }

  async append(envelope: Envelope): Promise<void> {
    if (this.closed) throw new Error("the outbox is closed");
    this.pending += 1;
    try {
      await this.exclusive(async () => {
        const fd = await this.activeFile();
        await fd.write(`${JSON.stringify(recordOf(envelope))}\n`);
        await fd.datasync();
      });
    } catch (err) {
      this.pending -= 1;
      throw err;
    }
    this.appendedSinceEmpty += 1;
    if (this.appendedSinceEmpty === 1 || this.appendedSinceEmpty % LOG_APPENDED_EVERY === 0) {
      this.opts.log.warn({ topic: envelope.topic, pending: this.pending }, "bus.outbox.appended");
    }
    this.kick();
  }

  /** Stops the drain loop; whatever is left stays on disk for the next start. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.waker.wake();
    await this.draining;
    await this.exclusive(async () => {
      await this.fd?.close();
      this.fd = undefined;
    });
    await rm(path.join(this.dir, LOCK), { force: true });
    openDirs.delete(this.dir);
  }

  private kick(): void {
    if (this.draining || this.closed || this.stopped) return;
    let failed = false;
    this.draining = this.drain()
      .catch((err: unknown) => {
        failed = true;
        this.opts.log.error({ err }, "bus.outbox.drain_failed");
      })
      .finally(() => {
        this.draining = undefined;
        if (this.pending === 0 || this.closed || this.stopped) return;
        // Appended while the last pass was finishing: go again. After a disk failure, not in a spin.
        if (failed) setTimeout(() => this.kick(), this.opts.retryMs).unref();
        else this.kick();
      });
  }

  private sendOnce(envelope: Envelope): Promise<void> {
    return within(this.opts.send(envelope), this.opts.timeoutMs, () => new SendTimeout(this.opts.timeoutMs));
  }

  private async drain(): Promise<void> {
    const started = Date.now();
    let sent = 0;
    while (!this.closed && !this.stopped) {
      const segment = await this.exclusive(() => this.oldestSegment());
      if (!segment) {
        if (sent > 0) this.opts.log.info({ sent, pending: this.pending, durationMs: Date.now() - started }, "bus.outbox.drained");
        this.appendedSinceEmpty = 0;
        return;
      }
      const done = await this.sendSegment(segment, () => (sent += 1));
      if (!done) return;
      // Cursor first: a crash in between resends the segment (duplicates), never skips a later one.
      await rm(path.join(this.dir, CURSOR), { force: true });
      await rm(path.join(this.dir, segment), { force: true });
    }
  }

  /** The oldest segment; rotates `active.log` into one when only it holds events. */
  private async oldestSegment(): Promise<string | undefined> {
    const segments = await this.segments();
    if (segments.length > 0) return segments[0];
    const size = await sizeOf(path.join(this.dir, ACTIVE));
    if (size === 0) return undefined;
    await this.fd?.close();
    this.fd = undefined;
    const name = `segment-${String(this.nextSegment++).padStart(10, "0")}.log`;
    await rename(path.join(this.dir, ACTIVE), path.join(this.dir, name));
    await syncDir(this.dir);
    return name;
  }

  /** Sends a segment from its cursor; false when closed before the end. */
  private async sendSegment(segment: string, onSent: () => void): Promise<boolean> {
    const file = path.join(this.dir, segment);
    let offset = await this.cursorOf(segment);
    let sinceCursor = 0;
    let failing = false;
    for await (const { line, end } of linesOf(file, offset)) {
      const envelope = this.parse(line, segment);
      let delivered = false;
      while (envelope) {
        if (this.closed || this.stopped) {
          await this.saveCursor(segment, offset);
          return false;
        }
        try {
          await this.sendOnce(envelope);
          delivered = true;
          break;
        } catch (err) {
          const failure = this.opts.failureOf(err);
          if (failure === "refused") {
            await this.reject(envelope, err);
            break;
          }
          if (failure === "broken") {
            this.stop(err);
            continue;
          }
          if (!failing) this.opts.log.warn({ err, pending: this.pending }, "bus.outbox.send_failed");
          failing = true;
          await this.waker.sleep(this.opts.retryMs);
        }
      }
      failing = false;
      offset = end;
      this.pending -= 1;
      if (delivered) onSent();
      if (++sinceCursor >= CURSOR_EVERY) {
        await this.saveCursor(segment, offset);
        sinceCursor = 0;
      }
    }
    return true;
  }

  /** The broker refused the event itself (retrying cannot help): set aside for an operator, never dropped. */
  private async reject(envelope: Envelope, err: unknown): Promise<void> {
    this.opts.log.error({ err, topic: envelope.topic, eventId: envelope.id }, "bus.outbox.rejected");
    await appendFile(path.join(this.dir, REJECTED), `${JSON.stringify(recordOf(envelope))}\n`);
  }

  private parse(line: string, segment: string): Envelope | undefined {
    try {
      return envelopeOfRecord(JSON.parse(line) as StoredRecord);
    } catch (err) {
      this.opts.log.error({ err, segment }, "bus.outbox.corrupt_record");
      return undefined;
    }
  }

  private async recover(): Promise<void> {
    await cutTornTail(path.join(this.dir, ACTIVE));
    const segments = await this.segments();
    let cursor = await this.readCursor();
    if (cursor && !segments.includes(cursor.segment)) {
      await rm(path.join(this.dir, CURSOR), { force: true });
      cursor = undefined;
    }
    const last = segments[segments.length - 1];
    this.nextSegment = last === undefined ? 1 : Number(SEGMENT.exec(last)?.[1] ?? 0) + 1;
    for (const segment of segments) {
      await cutTornTail(path.join(this.dir, segment));
      const from = cursor?.segment === segment ? cursor.offset : 0;
      for await (const _ of linesOf(path.join(this.dir, segment), from)) this.pending += 1;
    }
    for await (const _ of linesOf(path.join(this.dir, ACTIVE), 0)) this.pending += 1;
  }

  private async segments(): Promise<string[]> {
    return (await readdir(this.dir)).filter((name) => SEGMENT.test(name)).sort();
  }

  private async activeFile(): Promise<FileHandle> {
    if (!this.fd) {
      this.fd = await open(path.join(this.dir, ACTIVE), "a");
      await syncDir(this.dir);
    }
    return this.fd;
  }

  private async cursorOf(segment: string): Promise<number> {
    const cursor = await this.readCursor();
    return cursor?.segment === segment ? cursor.offset : 0;
  }

  private async readCursor(): Promise<Cursor | undefined> {
    try {
      const cursor = JSON.parse(await readFile(path.join(this.dir, CURSOR), "utf8")) as Partial<Cursor>;
      return typeof cursor.segment === "string" && typeof cursor.offset === "number"
        ? { segment: cursor.segment, offset: cursor.offset }
        : undefined;
    } catch {
      return undefined;
    }
  }

  private async saveCursor(segment: string, offset: number): Promise<void> {
    const tmp = path.join(this.dir, `${CURSOR}.tmp`);
    const fd = await open(tmp, "w");
    try {
      await fd.writeFile(JSON.stringify({ segment, offset }));
      await fd.datasync();
    } finally {
      await fd.close();
    }
    await rename(tmp, path.join(this.dir, CURSOR));
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.serial.then(work, work);
    // The caller gets its own outcome from `result`; the chain only orders the work, so a failure
    // must not stop what is queued after it.
    this.serial = result.catch(() => undefined);
    return result;
  }
}

function recordOf(e: Envelope): StoredRecord {
  return {
    id: e.id,
    topic: e.topic,
    key: e.key,
    type: e.type,
    headers: e.headers,
    payload: Buffer.from(e.payload).toString("base64"),
  };
}

function envelopeOfRecord(r: StoredRecord): Envelope {
  if (typeof r.id !== "string" || typeof r.topic !== "string" || typeof r.payload !== "string") {
    throw new Error("not an outbox record");
  }
  return {
    id: r.id,
    topic: r.topic,
    key: r.key,
    type: r.type,
    headers: r.headers,
    payload: Buffer.from(r.payload, "base64"),
  };
}

/** Complete lines (ending in a newline) from `start`, with the byte offset after each. */
async function* linesOf(file: string, start: number): AsyncGenerator<{ line: string; end: number }> {
  if ((await sizeOf(file)) <= start) return;
  let carry = Buffer.alloc(0);
  let offset = start;
  for await (const chunk of createReadStream(file, { start }) as AsyncIterable<Buffer>) {
    let data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let newline = data.indexOf(0x0a);
    while (newline >= 0) {
      const line = data.subarray(0, newline).toString("utf8");
      offset += newline + 1;
      data = data.subarray(newline + 1);
      if (line.length > 0) yield { line, end: offset };
      newline = data.indexOf(0x0a);
    }
    carry = Buffer.from(data);
  }
}

async function cutTornTail(file: string): Promise<void> {
  const size = await sizeOf(file);
  if (size === 0) return;
  const data = await readFile(file);
  const keep = data.lastIndexOf(0x0a) + 1;
  if (keep < size) await truncate(file, keep);
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
}

async function syncDir(dir: string): Promise<void> {
  const fd = await open(dir, "r");
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

/** One process per outbox directory: a lock file holding the owner's pid; a dead owner's lock is taken over. */
async function lock(dir: string): Promise<void> {
  const file = path.join(dir, LOCK);
  try {
    await writeFile(file, String(process.pid), { flag: "wx" });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const owner = Number((await readFile(file, "utf8")).trim());
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
    throw new Error(`outbox ${dir} is in use by process ${owner}`);
  }
  await writeFile(file, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

class SendTimeout extends Error {
  constructor(ms: number) {
    super(`the broker did not acknowledge within ${ms} ms`);
    this.name = "SendTimeout";
  }
}
