import { EventEmitter } from "node:events";
import * as grpc from "@grpc/grpc-js";
import { healthService, type GrpcService } from "./server";

/**
 * grpc-js's default for the largest message a receiver takes (4 MiB; neither Router's servers nor
 * its clients change it): a larger message fails with RESOURCE_EXHAUSTED here as it would on the wire.
 */
const MAX_RECEIVE_BYTES = 4 * 1024 * 1024;
/** How long `close` lets calls in flight finish before it ends them, as `RunningGrpcServer.close` does. */
const CLOSE_GRACE_MS = 2_000;
/** setTimeout's longest delay; a farther deadline is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A generated client class (`ledger.LedgerServiceClient`): the client type and its service definition. */
export interface GeneratedClientClass<C extends grpc.Client> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ClientOptions>): C;
  service: grpc.ServiceDefinition;
}

type AnyMethod = grpc.MethodDefinition<unknown, unknown>;
type UnaryHandler = grpc.handleUnaryCall<unknown, unknown>;
type UnaryCallback = (err: grpc.ServiceError | null, value?: unknown) => void;
type Status = { code: grpc.status; details: string; metadata: grpc.Metadata };
/** What a handler passes its callback as the error (grpc-js exports the type only as this parameter). */
type HandlerError = NonNullable<Parameters<grpc.sendUnaryData<unknown>>[0]>;
type AuthContext = ReturnType<grpc.ServerUnaryCall<unknown, unknown>["getAuthContext"]>;

/**
 * Serves gRPC services to callers in the same process without a socket: a call goes through the
 * generated definition's serialize and deserialize on both sides (the handler never shares an object
 * with its caller, and sees exactly what the wire would deliver), reaches the same handler the
 * gRPC server would run, and fails as it would over the wire: a handler's error carries its code,
 * details and trailing metadata, a deadline ends the call with DEADLINE_EXCEEDED and cancels it
 * for the handler, a closed server answers UNAVAILABLE. HTTP/2 framing, the socket writes and the
 * channel machinery are what it leaves out. Unary methods only (every Router service is unary).
 */
export class InProcessServer {
  /** Each unary method by path: its handler, or the name grpc-js's UNIMPLEMENTED answer gives it. */
  private readonly handlers = new Map<string, UnaryHandler | string>();
  private readonly inFlight = new Set<InProcessCall>();
  private closing: Promise<void> | undefined;
  private whenIdle: (() => void) | undefined;
  private answered = 0;

  /** `services` plus `grpc.health.v1` for them, as `startGrpcServer` serves them. */
  constructor(services: GrpcService[], opts: { ready?: () => Promise<boolean> } = {}) {
    for (const s of [...services, healthService(services, opts.ready)]) {
      for (const [name, method] of Object.entries(s.definition)) {
        const handler = s.implementation[name] ?? (method.originalName ? s.implementation[method.originalName] : undefined);
        if (!method.requestStream && !method.responseStream) this.handlers.set(method.path, (handler as UnaryHandler | undefined) ?? name);
      }
    }
  }

  /** Calls answered (or failed) so far: what shows the transport in use. */
  get calls(): number {
    return this.answered;
  }

  /**
   * A client of one served service, shaped as the generated client `Client` builds: each unary method
   * takes `(request, [metadata], [options], callback)` and returns a call the caller can cancel,
   * so `callUnary` and the code holding a generated client use it unchanged. Nothing is connected,
   * so `close` does nothing and `waitForReady` answers at once (with an error once the server is closed).
   */
  client<C extends grpc.Client>(clientClass: GeneratedClientClass<C>): C {
    const methods: Record<string, unknown> = {
      close: () => undefined,
      getChannel: () => {
        throw new Error("an in-process client has no channel");
      },
      waitForReady: (_deadline: grpc.Deadline, callback: (error?: Error) => void) =>
        process.nextTick(() => callback(this.closing ? new Error("the in-process server is closed") : undefined)),
    };
    for (const [name, method] of Object.entries(clientClass.service)) {
      const unary = (request: unknown, ...rest: unknown[]) => this.call(method, request, rest);
      // Named after the method: callUnary names its client span by the function's name.
      Object.defineProperty(unary, "name", { value: name });
      methods[name] = unary;
      if (method.originalName) methods[method.originalName] = unary;
    }
    // The one cast: the object has every method of the generated client that a caller uses (the
    // unary methods, close, getChannel, waitForReady), not grpc.Client's private channel fields.
    return methods as unknown as C;
  }

  /**
   * Refuses new calls (UNAVAILABLE) and resolves once the calls in flight have been answered; after
   * two seconds those still running are ended with UNAVAILABLE, as a gRPC server's forced shutdown
   * ends them.
   */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.inFlight.size === 0) return resolve();
      const force = setTimeout(() => {
        for (const call of [...this.inFlight]) call.fail(grpc.status.UNAVAILABLE, "the server was shut down", "cancelled");
      }, CLOSE_GRACE_MS);
      force.unref();
      this.whenIdle = () => {
        clearTimeout(force);
        resolve();
      };
    });
    return this.closing;
  }

  private call(method: AnyMethod, request: unknown, rest: unknown[]): grpc.ClientUnaryCall {
    const callback = rest[rest.length - 1];
    if (typeof callback !== "function") throw new TypeError(`${method.path}: the last argument must be a callback`);
    let metadata: grpc.Metadata | undefined;
    let options: grpc.CallOptions = {};
    for (const arg of rest.slice(0, -1)) {
      if (arg instanceof grpc.Metadata) metadata = arg;
      else if (arg !== null && typeof arg === "object") options = arg;
    }
    const call = new InProcessCall(method, callback as UnaryCallback, options.deadline, (ended) => this.ended(ended));
    this.inFlight.add(call);
    if (method.requestStream || method.responseStream) {
      call.failSoon(grpc.status.UNIMPLEMENTED, `${method.path} streams, and only unary methods are served in process`);
    } else if (this.closing) {
      call.failSoon(grpc.status.UNAVAILABLE, "the server is shut down");
    } else {
      call.start(request, metadata, this.handlers.get(method.path));
    }
    return call.client;
  }

  private ended(call: InProcessCall): void {
    this.answered += 1;
    this.inFlight.delete(call);
    if (this.inFlight.size === 0) this.whenIdle?.();
  }
}

/** One unary call: the caller's side (`client`) and the handler's (`server`), and how it ended. */
class InProcessCall {
  readonly client: InProcessClientCall;
  private server: InProcessServerCall | undefined;
  private done = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly method: AnyMethod,
    private readonly callback: UnaryCallback,
    private readonly deadline: grpc.Deadline | undefined,
    private readonly onEnd: (call: InProcessCall) => void,
  ) {
    this.client = new InProcessClientCall(() => this.fail(grpc.status.CANCELLED, "Cancelled on client", "cancelled"));
  }

  start(request: unknown, metadata: grpc.Metadata | undefined, handler: UnaryHandler | string | undefined): void {
    // As grpc-js does: the request is serialized in the caller's stack, the handler runs later.
    let bytes: Buffer;
    try {
      bytes = this.method.requestSerialize(request);
    } catch (err) {
      return this.failSoon(grpc.status.INTERNAL, `Request message serialization failure: ${messageOf(err)}`);
    }
    const timeoutMs = relativeTimeoutMs(this.deadline);
    if (timeoutMs <= 0) return this.failSoon(grpc.status.DEADLINE_EXCEEDED, "Deadline exceeded");
    if (timeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => this.fail(grpc.status.DEADLINE_EXCEEDED, "Deadline exceeded", "deadline"), timeoutMs);
    }
    // The handler gets its own copy of the metadata, as it would from the wire.
    const received = metadata ? metadata.clone() : new grpc.Metadata();
    process.nextTick(() => this.dispatch(bytes, received, handler));
  }

  /** Ends the call with `code` on a later tick (never inside the caller's own call). */
  failSoon(code: grpc.status, details: string): void {
    process.nextTick(() => this.fail(code, details, "cancelled"));
  }

  /** Ends the call with an error status; the handler, if running, sees it cancelled. */
  fail(code: grpc.status, details: string, reason: "cancelled" | "deadline", metadata?: grpc.Metadata | null): void {
    if (this.done) return;
    this.end({ code, details, metadata: metadata ? metadata.clone() : new grpc.Metadata() });
    if (this.server && !this.server.cancelled) {
      this.server.cancelled = true;
      this.server.emit("cancelled", reason);
    }
  }

  private dispatch(bytes: Buffer, metadata: grpc.Metadata, handler: UnaryHandler | string | undefined): void {
    if (this.done) return;
    if (bytes.length > MAX_RECEIVE_BYTES) {
      return this.fail(grpc.status.RESOURCE_EXHAUSTED, `Received message larger than max (${bytes.length} vs. ${MAX_RECEIVE_BYTES})`, "cancelled");
    }
    // A served service's method without a handler is named by its key, a path nothing serves by itself.
    if (typeof handler !== "function") {
      return this.fail(grpc.status.UNIMPLEMENTED, `The server does not implement the method ${handler ?? this.method.path}`, "cancelled");
    }
    let request: unknown;
    try {
      request = this.method.requestDeserialize(bytes);
    } catch {
      return this.fail(grpc.status.INTERNAL, "Error deserializing request", "cancelled");
    }
    this.server = new InProcessServerCall(this.method.path, metadata, request, this.deadline ?? Infinity);
    try {
      handler(this.server, (err, value, trailer) => this.respond(err, value, trailer));
    } catch {
      // grpc-js hides what a handler threw unless GRPC_NODE_DEBUG_SEND_ERROR_DETAILS is set.
      this.fail(grpc.status.UNKNOWN, "Unknown error", "cancelled");
    }
  }

  /** The handler's callback: the status a gRPC server would send, read by the caller as a client would. */
  private respond(err: HandlerError | null, value?: unknown, trailer?: grpc.Metadata): void {
    if (this.done) return;
    if (err) {
      const status = serverErrorToStatus(err, trailer);
      return this.fail(status.code, status.details, "cancelled", status.metadata);
    }
    let bytes: Buffer;
    try {
      bytes = this.method.responseSerialize(value);
    } catch {
      // As grpc-js: the reason stays on the server unless GRPC_NODE_DEBUG_SEND_ERROR_DETAILS is set.
      return this.fail(grpc.status.INTERNAL, "Error serializing response", "cancelled");
    }
    if (bytes.length > MAX_RECEIVE_BYTES) {
      return this.fail(grpc.status.RESOURCE_EXHAUSTED, `Received message larger than max (${bytes.length} vs. ${MAX_RECEIVE_BYTES})`, "cancelled");
    }
    let response: unknown;
    try {
      response = this.method.responseDeserialize(bytes);
    } catch (e) {
      return this.fail(grpc.status.INTERNAL, `Response message parsing error: ${messageOf(e)}`, "cancelled");
    }
    this.end({ code: grpc.status.OK, details: "OK", metadata: trailer ? trailer.clone() : new grpc.Metadata() }, response);
  }

  private end(status: Status, response?: unknown): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.onEnd(this);
    if (status.code === grpc.status.OK) this.callback(null, response);
    else this.callback(serviceError(status));
    this.client.emit("status", status);
  }
}

/** What the caller holds: grpc-js's ClientUnaryCall (cancel, peer, the `status` event). */
class InProcessClientCall extends EventEmitter implements grpc.ClientUnaryCall {
  constructor(private readonly onCancel: () => void) {
    super();
  }
  cancel(): void {
    this.onCancel();
  }
  getPeer(): string {
    return "in-process";
  }
  getAuthContext(): null {
    return null;
  }
}

/** What the handler gets: grpc-js's ServerUnaryCall, `cancelled` and its event included. */
class InProcessServerCall extends EventEmitter implements grpc.ServerUnaryCall<unknown, unknown> {
  cancelled = false;
  constructor(
    private readonly path: string,
    readonly metadata: grpc.Metadata,
    readonly request: unknown,
    private readonly deadline: grpc.Deadline,
  ) {
    super();
  }
  getPeer(): string {
    return "in-process";
  }
  sendMetadata(_responseMetadata: grpc.Metadata): void {
    // A unary caller reads only the response and the status; leading metadata has no reader here.
  }
  getDeadline(): grpc.Deadline {
    return this.deadline;
  }
  getPath(): string {
    return this.path;
  }
  getHost(): string {
    return "in-process";
  }
  getAuthContext(): AuthContext {
    return {};
  }
  getMetricsRecorder(): never {
    throw new Error("per-call metrics (ORCA) are not recorded in process");
  }
}

/** grpc-js's own rule (server-call.ts serverErrorToStatus) for what status a handler's error sends. */
function serverErrorToStatus(
  error: HandlerError,
  trailer: grpc.Metadata | undefined,
): { code: grpc.status; details: string; metadata: grpc.Metadata | null } {
  const status = {
    code: grpc.status.UNKNOWN,
    details: "message" in error ? error.message : "Unknown Error",
    metadata: trailer ?? error.metadata ?? null,
  };
  if ("code" in error && typeof error.code === "number" && Number.isInteger(error.code)) {
    status.code = error.code;
    if ("details" in error && typeof error.details === "string") status.details = error.details;
  }
  return status;
}

/** The error a grpc-js client hands its callback (call.ts callErrorFromStatus). */
function serviceError(status: Status): grpc.ServiceError {
  return Object.assign(new Error(`${status.code} ${grpc.status[status.code]}: ${status.details}`), status);
}

function relativeTimeoutMs(deadline: grpc.Deadline | undefined): number {
  if (deadline === undefined) return Infinity;
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return at === Infinity ? Infinity : at - Date.now();
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
