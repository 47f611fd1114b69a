import type { IncomingMessage, ServerResponse } from "node:http";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from "@opentelemetry/api";

export { SpanKind, type Span };

/**
 * Whether the standard OpenTelemetry settings ask for traces: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`) or `OTEL_TRACES_EXPORTER=otlp`,
 * and not `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none`. Off by default.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter === "none") return false;
  return exporter === "otlp" || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

let enabled = false;

/** True once `startTracing` installed a provider in this process; every helper here is a no-op before. */
export const tracingEnabled = (): boolean => enabled;

export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Installs the process's tracer provider when the environment asks for traces (see
 * `tracingRequested`): W3C trace context, spans batched to the OTLP/HTTP exporter configured by the
 * standard `OTEL_EXPORTER_OTLP_*` variables, context carried across async calls. One per process;
 * the one-process runner calls it once for every service.
 */
export function startTracing(opts: { serviceName: string; version?: string; env?: NodeJS.ProcessEnv }): Tracing {
  const env = opts.env ?? process.env;
  if (!tracingRequested(env) || enabled) return { shutdown: async () => undefined };
  // The SDK and its exporter are loaded only here: a process with tracing off (the default) never
  // pays their memory and start-up time.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { installTracerProvider } = require("./tracer-provider") as typeof import("./tracer-provider");
  const provider = installTracerProvider(env.OTEL_SERVICE_NAME ?? opts.serviceName, opts.version ?? "");
  enabled = true;
  return {
    shutdown: async () => {
      await provider.shutdown();
      enabled = false;
    },
  };
}

const tracer = () => trace.getTracer("router");

/** Runs `fn` in a new span (child of the active one), ended when `fn` settles; an error marks it. */
export async function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context; links?: Link[] },
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!enabled) return fn(undefined);
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind, attributes: opts.attributes, links: opts.links }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** The active trace context as carrier headers (`traceparent`, `tracestate`); empty when tracing is off. */
export function traceHeaders(): Record<string, string> {
  if (!enabled) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The trace context a message or request carries (root when none). */
export function contextFrom(carrier: Record<string, string | string[] | undefined>): Context {
  if (!enabled) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, {
    get: (c, key) => {
      const v = c[key];
      return Array.isArray(v) ? v[0] : v;
    },
    keys: (c) => Object.keys(c),
  });
}

/** A link to the span a carrier names, for work that serves several traces at once (a batch). */
export function linkFrom(carrier: Record<string, string | undefined>): Link | null {
  const span = trace.getSpanContext(contextFrom(carrier));
  return span ? { context: span } : null;
}

/**
 * A Node request listener whose every request runs in a server span (parent: the caller's
 * `traceparent`), ended when the response closes; `route` names it without raw paths. Tracing off:
 * the listener itself.
 */
export function tracedListener(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  route: (req: IncomingMessage) => string,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (!enabled) return listener(req, res);
    void inSpan(
      `${req.method ?? "GET"} ${route(req)}`,
      { kind: SpanKind.SERVER, parent: contextFrom(req.headers), attributes: { "http.request.method": req.method ?? "" } },
      (span) =>
        new Promise<void>((resolve) => {
          res.once("close", () => {
            span?.setAttribute("http.response.status_code", res.statusCode);
            resolve();
          });
          listener(req, res);
        }),
    );
  };
}
