import * as grpc from "@grpc/grpc-js";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import { fromGrpcError } from "./errors";
import { handlerFailure } from "./server";

/**
 * Unary calls carried as messages on a few long-lived bidirectional streams. A grpc-js unary call
 * opens an HTTP/2 stream with its own headers, deadline timer and trailers, several hundred
 * microseconds of CPU on each end; a message on an open stream costs about a tenth of that. The
 * messages follow one convention, so any method can be carried: a message carries calls
 * `{ id, request }`, an answer message answers `{ id, result }` with the response or the error a
 * unary call would have failed with.
 *
 * A grpc-js stream writes one message at a time: the next goes out only once the previous one's
 * write has completed, an event loop turn or more later. So each side gathers what it has to send
 * while a write is in flight and sends it as one message when the write completes: one call or
 * answer per message on a quiet stream, as many as came meanwhile on a busy one.
 */
export interface StreamedCalls<Req> {
  calls: StreamedCall<Req>[];
}

export interface StreamedAnswers<Res> {
  answers: StreamedAnswer<Res>[];
}

export interface StreamedCall<Req> {
  id: number;
  request?: Req | undefined;
}

export interface StreamedAnswer<Res> {
  id: number;
  result?: { $case: "response"; value: Res } | { $case: "error"; value: CallErrorMessage } | undefined;
}

/** A failed call's status and trailing metadata, as a message (`CallError` in the protos). */
export interface CallErrorMessage {
  code: number;
  details: string;
  metadata: { [key: string]: Buffer };
}

/** How long a stream carries new calls before it is half-closed and another opened (see CallStreams). */
export const DEFAULT_STREAM_AGE_MS = 30_000;
/** After a server answers that it has no stream method, calls go unary this long before a stream is tried again. */
const UNARY_AFTER_UNIMPLEMENTED_MS = 60_000;
/** How often a failing stream is logged at most (the line counts the failures since the last one). */
const FAILED_LOG_MS = 10_000;
/** How long `close` waits for the streams to be answered and ended before it cancels them. */
const CLOSE_GRACE_MS = 2_000;

interface Pending<Req, Res> {
  id: number;
  request: Req;
  resolve: (res: Res) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
  lane: Lane<Req, Res> | undefined;
  /** Sent again once already, after a stream ended without taking it. */
  resent: boolean;
}

export interface CallStreamsOptions<Req, Res> {
  /** Opens one stream of the method (the generated client's method, bound to its client). */
  open: () => grpc.ClientDuplexStream<StreamedCalls<Req>, StreamedAnswers<Res>>;
  /** The same call as a unary call: used while the server has no stream method (an older server). */
  unary: (request: Req) => Promise<Res>;
  /** Names the service in errors, as callUnary does. */
  service: string;
  /** Every call's deadline, from the moment it is made. */
  deadlineMs: number;
  /** How many streams are kept open: each is balanced to a server as a call is, when opened. */
  streams: number;
  maxAgeMs?: number;
  log: Logger;
}

/**
 * The client of a stream method. Calls go round the `streams` open streams in turn. Each stream is
 * one call to the channel, so a round-robin channel places each on a server of its own; a stream is
 * half-closed after `maxAgeMs` and another opened, so servers added later get their share, and no
 * stream outlives a server's connection age. Each call keeps its own deadline. When a stream ends
 * with an error, its calls fail with that error, mapped as a unary call's would be. When it ends
 * OK, the server took every message it was going to take (it answers those first): a call still
 * unanswered was not taken and is sent once more on another stream.
 */
export class CallStreams<Req, Res> {
  private readonly lanes: (Lane<Req, Res> | undefined)[];
  /** Every stream not yet ended, in a slot or half-closed and finishing. */
  private readonly live = new Set<Lane<Req, Res>>();
  private readonly maxAgeMs: number;
  private turn = 0;
  private lastId = 0;
  private unaryUntil = 0;
  private closed = false;
  private failedLoggedAt = -Infinity;
  private failedSinceLog = 0;

  constructor(private readonly opts: CallStreamsOptions<Req, Res>) {
    if (!Number.isInteger(opts.streams) || opts.streams < 1) throw new Error(`streams must be an integer of at least 1, not ${opts.streams}`);
    this.lanes = new Array<Lane<Req, Res> | undefined>(opts.streams);
    this.maxAgeMs = opts.maxAgeMs ?? DEFAULT_STREAM_AGE_MS;
  }

  /** How many streams are open now (half-closed ones included). */
  get openStreams(): number {
    return this.live.size;
  }

  call(request: Req): Promise<Res> {
    if (this.closed) return Promise.reject(this.unavailable("the client is closed"));
    if (this.unaryUntil > Date.now()) return this.opts.unary(request);
    return new Promise<Res>((resolve, reject) => {
      const pending: Pending<Req, Res> = {
        id: 0,
        request,
        resolve,
        reject,
        timer: setTimeout(() => this.expire(pending), this.opts.deadlineMs),
        lane: undefined,
        resent: false,
      };
      this.send(pending);
    });
  }

  /** Half-closes every stream; resolves once they have ended (their calls answered), or cancels them after two seconds. */
  async close(): Promise<void> {
    this.closed = true;
    const ending = [...this.live];
    for (const lane of ending) lane.retire();
    if (ending.length === 0) return;
    let force: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(ending.map((lane) => lane.ended)),
      new Promise<void>((resolve) => {
        force = setTimeout(() => {
          for (const lane of ending) lane.stream.cancel();
          resolve();
        }, CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(force);
  }

  private send(pending: Pending<Req, Res>): void {
    this.lastId = this.lastId >= 0xffff_ffff ? 1 : this.lastId + 1;
    pending.id = this.lastId;
    this.lane().send(pending);
  }

  private lane(): Lane<Req, Res> {
    const slot = this.turn;
    this.turn = (slot + 1) % this.lanes.length;
    const now = Date.now();
    let lane = this.lanes[slot];
    if (lane === undefined || lane.closed || now - lane.openedAt >= this.maxAgeMs) {
      lane?.retire();
      lane = new Lane(this.opts.open(), now, this.opts.service, (ended, status) => this.ended(ended, status));
      this.lanes[slot] = lane;
      this.live.add(lane);
    }
    return lane;
  }

  private expire(pending: Pending<Req, Res>): void {
    pending.lane?.pending.delete(pending.id);
    pending.lane = undefined;
    pending.reject(fromGrpcError({ code: grpc.status.DEADLINE_EXCEEDED, details: "deadline exceeded" }, this.opts.service));
  }

  private ended(lane: Lane<Req, Res>, status: grpc.StatusObject): void {
    this.live.delete(lane);
    const slot = this.lanes.indexOf(lane);
    if (slot >= 0) this.lanes[slot] = undefined;
    if (lane.pending.size === 0) return;
    const unanswered = [...lane.pending.values()];
    lane.pending.clear();
    if (status.code === grpc.status.UNIMPLEMENTED) {
      // A server without the stream method (an older one while a rollout runs): it took nothing.
      if (this.unaryUntil <= Date.now()) this.opts.log.warn({ service: this.opts.service }, "grpc.call_streams.unimplemented_unary_for_now");
      this.unaryUntil = Date.now() + UNARY_AFTER_UNIMPLEMENTED_MS;
      for (const pending of unanswered) {
        clearTimeout(pending.timer);
        this.opts.unary(pending.request).then(pending.resolve, pending.reject);
      }
      return;
    }
    const untaken = status.code === grpc.status.OK;
    if (!untaken) this.warnFailed(status, unanswered.length);
    for (const pending of unanswered) {
      pending.lane = undefined;
      if (untaken && !pending.resent && !this.closed) {
        pending.resent = true;
        this.send(pending);
        continue;
      }
      clearTimeout(pending.timer);
      pending.reject(
        untaken ? this.unavailable(`the ${this.opts.service} service ended the stream without answering`) : fromGrpcError(status, this.opts.service),
      );
    }
  }

  /** At most one line per FAILED_LOG_MS: while a server is down every new stream fails at once. */
  private warnFailed(status: grpc.StatusObject, calls: number): void {
    this.failedSinceLog++;
    const now = Date.now();
    if (now - this.failedLoggedAt < FAILED_LOG_MS) return;
    this.opts.log.warn(
      { service: this.opts.service, code: status.code, details: status.details, calls, streamsFailed: this.failedSinceLog },
      "grpc.call_streams.stream_failed",
    );
    this.failedLoggedAt = now;
    this.failedSinceLog = 0;
  }

  private unavailable(details: string): DomainError {
    return fromGrpcError({ code: grpc.status.UNAVAILABLE, details }, this.opts.service);
  }
}

/** One open stream and the calls sent on it that are not answered yet. */
class Lane<Req, Res> {
  readonly pending = new Map<number, Pending<Req, Res>>();
  /** Resolves when the stream has ended, however. */
  readonly ended: Promise<void>;
  /** Half-closed by this side, or ended: it takes no more calls. */
  closed = false;
  private readonly out: GatheredWrites<StreamedCall<Req>>;

  constructor(
    readonly stream: grpc.ClientDuplexStream<StreamedCalls<Req>, StreamedAnswers<Res>>,
    readonly openedAt: number,
    private readonly service: string,
    onEnd: (lane: Lane<Req, Res>, status: grpc.StatusObject) => void,
  ) {
    this.out = new GatheredWrites((calls, written) => stream.write({ calls }, written));
    stream.on("data", (message: StreamedAnswers<Res>) => {
      for (const answer of message.answers) this.answer(answer);
    });
    // A failed stream emits `error` and then `status`; the status says everything, once.
    stream.on("error", () => undefined);
    this.ended = new Promise<void>((resolve) => {
      stream.once("status", (status: grpc.StatusObject) => {
        this.closed = true;
        // An answer grpc-js pushed that still waits in the readable buffer (a reader that was paused)
        // is handed to the data listener first: read() emits it, so no answered call is taken for
        // unanswered below.
        while (stream.read() !== null);
        onEnd(this, status);
        resolve();
      });
    });
  }

  send(pending: Pending<Req, Res>): void {
    pending.lane = this;
    this.pending.set(pending.id, pending);
    this.out.push({ id: pending.id, request: pending.request });
  }

  /** Takes no more calls: the server answers those it has and ends the stream. */
  retire(): void {
    if (this.closed) return;
    this.closed = true;
    this.out.flushNow();
    this.stream.end();
  }

  private answer(answer: StreamedAnswer<Res>): void {
    const pending = this.pending.get(answer.id);
    // A call whose deadline passed is forgotten; its late answer is dropped.
    if (pending === undefined) return;
    this.pending.delete(answer.id);
    clearTimeout(pending.timer);
    pending.lane = undefined;
    const result = answer.result;
    if (result?.$case === "response") pending.resolve(result.value);
    else if (result?.$case === "error") pending.reject(fromGrpcError(callStatus(result.value), this.service));
    else pending.reject(fromGrpcError({ code: grpc.status.INTERNAL, details: "an answer carried no result" }, this.service));
  }
}

/** A CallError message as the status a unary call would have failed with. */
function callStatus(error: CallErrorMessage): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(error.metadata)) metadata.set(key, key.endsWith("-bin") ? value : value.toString("utf8"));
  return { code: error.code, details: error.details, metadata };
}

/** A failed call's status as a CallError message. */
function callError(status: Partial<grpc.StatusObject> & { code: grpc.status }): CallErrorMessage {
  const metadata: { [key: string]: Buffer } = {};
  for (const [key, value] of Object.entries(status.metadata?.getMap() ?? {})) metadata[key] = Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8");
  return { code: status.code, details: status.details ?? "", metadata };
}

/** One stream being served: how many of its calls are running, and whether it takes more. */
interface ServedStream {
  call: grpc.ServerDuplexStream<StreamedCalls<unknown>, StreamedAnswers<unknown>>;
  out: GatheredWrites<StreamedAnswer<unknown>>;
  running: number;
  /** The caller half-closed it or the server is closing: no message is taken any more. */
  ending: boolean;
  /** Ended, or cancelled by the caller. */
  gone: boolean;
}

/**
 * The server side of CallStreams: handlers for stream methods, each message answered as the unary
 * handler of the same call would answer it (errors mapped by the same table). `close` stops every
 * stream from taking messages and ends each once its running calls are answered, so the callers
 * send what was not taken elsewhere; call it before the gRPC server's shutdown, which waits for
 * open streams.
 */
export class CallStreamsServer {
  private readonly open = new Set<ServedStream>();
  private closing = false;
  private left = 0;

  constructor(private readonly log: Logger) {}

  handler<Req, Res>(fn: (request: Req) => Promise<Res>): grpc.handleBidiStreamingCall<StreamedCalls<Req>, StreamedAnswers<Res>> {
    return (call) => {
      const out = new GatheredWrites<StreamedAnswer<unknown>>((answers, written) => call.write({ answers: answers as StreamedAnswer<Res>[] }, written));
      const served: ServedStream = { call, out, running: 0, ending: false, gone: false };
      if (this.closing) return void call.end();
      this.open.add(served);
      call.on("data", (message: StreamedCalls<Req>) => {
        for (const one of message.calls) this.take(served, one, fn);
      });
      call.on("end", () => this.finish(served));
      call.on("cancelled", () => {
        served.ending = true;
        served.gone = true;
        this.open.delete(served);
      });
      call.on("error", () => undefined);
    };
  }

  private take<Req, Res>(served: ServedStream, call: StreamedCall<Req>, fn: (request: Req) => Promise<Res>): void {
    // Not taken: the caller sends it again once the stream has ended.
    if (served.ending) return void this.left++;
    served.running++;
    const handled = call.request === undefined ? Promise.reject(new DomainError("invalid_request", "request is required")) : fn(call.request);
    handled.then(
      (value) => this.answer(served, { id: call.id, result: { $case: "response", value } }),
      (err: unknown) => this.answer(served, { id: call.id, result: { $case: "error", value: callError(handlerFailure(err, this.log)) } }),
    );
  }

  /** Open streams now. */
  get streams(): number {
    return this.open.size;
  }

  /** Calls left unread because their stream was ending (their callers send them again). */
  get untaken(): number {
    return this.left;
  }

  close(): void {
    this.closing = true;
    for (const served of [...this.open]) this.finish(served);
  }

  private answer(served: ServedStream, answer: StreamedAnswer<unknown>): void {
    served.running--;
    if (!served.gone) served.out.push(answer);
    if (served.ending) this.finish(served);
  }

  private finish(served: ServedStream): void {
    served.ending = true;
    if (served.running > 0 || served.gone) return;
    served.gone = true;
    this.open.delete(served);
    served.out.flushNow();
    served.call.end();
  }
}

/**
 * Items written to a grpc-js stream as few messages: at once when no write is in flight, else
 * gathered until the write in flight completes and then sent together (see StreamedCalls).
 */
class GatheredWrites<T> {
  private queue: T[] = [];
  private writing = false;

  constructor(private readonly write: (items: T[], written: () => void) => void) {}

  push(item: T): void {
    this.queue.push(item);
    if (!this.writing) this.flush();
  }

  /** Writes what is gathered now, without waiting for the write in flight (before the stream's end). */
  flushNow(): void {
    if (this.queue.length === 0) return;
    const items = this.queue;
    this.queue = [];
    this.write(items, () => undefined);
  }

  private flush(): void {
    const items = this.queue;
    this.queue = [];
    this.writing = true;
    this.write(items, () => {
      this.writing = false;
      if (this.queue.length > 0) this.flush();
    });
  }
}
