import { contextFrom, inSpan, SpanKind, tracingEnabled } from "@router/tracing";
import * as grpc from "@grpc/grpc-js";
import { health } from "@router/proto";
import type { Logger } from "@router/logging";
import { toGrpcError } from "./errors";

export interface GrpcService {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
}

export interface RunningGrpcServer {
  server: grpc.Server;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts a gRPC server with the given services plus `grpc.health.v1` (reporting SERVING for the
 * empty service name and each service's full name). Binds to `host:port`; port 0 picks a free one.
 * With `ready`, each service's full name is NOT_SERVING while it says no (its database does not
 * answer): readiness asks for the service's name, liveness for the empty one, which stays SERVING
 * so a database blip takes pods out of rotation without restarting them.
 */
export async function startGrpcServer(
  services: GrpcService[],
  opts: { host?: string; port: number; log: Logger; ready?: () => Promise<boolean> },
): Promise<RunningGrpcServer> {
  const server = new grpc.Server({
    "grpc.keepalive_permit_without_calls": 1,
    // Connections are recycled every few minutes (calls in flight get a minute to finish): a client
    // re-resolves its dns:/// target when it reconnects, so pods added behind a headless Service
    // get their share of round-robin calls without a restart of the callers.
    "grpc.max_connection_age_ms": 5 * 60_000,
    "grpc.max_connection_age_grace_ms": 60_000,
  });
  for (const s of [...services, healthService(services, opts.ready)]) server.addService(s.definition, s.implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host ?? "127.0.0.1"}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  opts.log.info({ port }, "grpc.server.listening");
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 2000).unref();
      }),
  };
}

/**
 * `grpc.health.v1` for `services`: SERVING for the empty name and each service's full name (with
 * `ready`, the full names follow it), SERVICE_UNKNOWN for any other name.
 */
export function healthService(services: GrpcService[], ready?: () => Promise<boolean>): GrpcService {
  const serving = new Set<string>([""]);
  for (const s of services) {
    const first = Object.values(s.definition)[0];
    if (first) serving.add(first.path.split("/")[1] ?? "");
  }
  const { SERVING, NOT_SERVING, SERVICE_UNKNOWN } = health.HealthCheckResponse_ServingStatus;
  const implementation: health.HealthServer = {
    check(call, callback) {
      const service = call.request.service;
      if (!serving.has(service)) return callback(null, { status: SERVICE_UNKNOWN });
      if (service === "" || !ready) return callback(null, { status: SERVING });
      ready().then(
        (ok) => callback(null, { status: ok ? SERVING : NOT_SERVING }),
        () => callback(null, { status: NOT_SERVING }),
      );
    },
  };
  return { definition: health.HealthService, implementation };
}

/** Wraps an async handler as a grpc-js unary handler, mapping thrown errors through one table. */
export function unaryHandler<Req, Res>(
  fn: (req: Req) => Promise<Res>,
  log: Logger,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const handled = tracingEnabled()
      ? inSpan(
          call.getPath(),
          { kind: SpanKind.SERVER, parent: contextFrom(call.metadata.getMap() as Record<string, string>), attributes: { "rpc.system": "grpc" } },
          () => fn(call.request),
        )
      : fn(call.request);
    handled.then(
      (res) => callback(null, res),
      (err: unknown) => callback(handlerFailure(err, log)),
    );
  };
}

/** A handler's error as the status its caller gets; one that is not a domain error is logged as a failure. */
export function handlerFailure(err: unknown, log: Logger): Partial<grpc.StatusObject> & { code: grpc.status } {
  const mapped = toGrpcError(err);
  if (mapped.code === grpc.status.INTERNAL) log.error({ err }, "grpc.handler.failed");
  return mapped;
}
