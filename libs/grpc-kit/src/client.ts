import * as grpc from "@grpc/grpc-js";
import { inSpan, SpanKind, traceHeaders, tracingEnabled } from "@router/tracing";
import { fromGrpcError } from "./errors";

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (err: grpc.ServiceError | null, res: Res) => void,
) => grpc.ClientUnaryCall;

/**
 * Calls a generated unary client method with a deadline (every call has one) and maps failures to
 * a DomainError naming the service.
 */
export function callUnary<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  opts: { deadlineMs: number; service: string },
): Promise<Res> {
  const send = (metadata: grpc.Metadata) =>
    new Promise<Res>((resolve, reject) => {
      method.call(client, request, metadata, { deadline: Date.now() + opts.deadlineMs }, (err, res) =>
        err ? reject(fromGrpcError(err, opts.service)) : resolve(res),
      );
    });
  if (!tracingEnabled()) return send(new grpc.Metadata());
  // Traced: a client span, its context carried to the server in the call's metadata.
  return inSpan(`${opts.service}/${method.name || "call"}`, { kind: SpanKind.CLIENT, attributes: { "rpc.system": "grpc" } }, () => {
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(traceHeaders())) metadata.set(k, v);
    return send(metadata);
  });
}

/**
 * Channel options shared by every client: keepalive so idle loopback connections stay warm, and a
 * reconnect backoff capped at one second. grpc-js starts at 1 s and grows 1.6x to 120 s, so a
 * client that saw its server down for a few seconds kept failing calls for 4-6 s after the server
 * was back; with 100 ms doubling to at most 1 s it is connected again within about a second. The
 * callers are a handful of services per process, so the extra connection attempts while a server
 * is down cost nothing that matters.
 */
export const CLIENT_OPTIONS: grpc.ClientOptions = {
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 1_000,
};

/**
 * The options for a client of `target`: CLIENT_OPTIONS, plus round-robin balancing over every
 * address a `dns:///name:port` target resolves to. On a headless Kubernetes Service that is every
 * ready pod (re-resolved when connections are recycled), so one gateway's calls spread across all
 * routing and ledger pods instead of riding one long-lived HTTP/2 connection to a single pod. A
 * plain `host:port` keeps grpc-js's default (pick_first), whose reconnection the single-server
 * setups (embedded, tests, compose) rely on.
 */
export function clientOptionsFor(target: string): grpc.ClientOptions {
  if (!target.startsWith("dns:")) return CLIENT_OPTIONS;
  return {
    ...CLIENT_OPTIONS,
    "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    // A restarted pod comes back at a new address: the name may be resolved again after 1 s
    // (grpc-js waits 30 s by default), so the new pod is found as fast as the reconnect backoff.
    "grpc.dns_min_time_between_resolutions_ms": 1_000,
  };
}

export const insecure = (): grpc.ChannelCredentials => grpc.credentials.createInsecure();
