import pino, { type Logger, type LoggerOptions } from "pino";
import pretty from "pino-pretty";

export type { Logger };

const CREDENTIAL_HEADERS = ["authorization", "cookie", "set-cookie", "x-api-key", "x-goog-api-key", "x-router-identity"];

/**
 * Paths redacted from every log line: credentials, keys and message bodies. Logs carry metadata only.
 */
export const REDACT_PATHS = [
  "authorization",
  "*.authorization",
  // Headers sit at the top (`headers`) or one level down (`req.headers`, `res.headers`, `upstream.headers`).
  ...CREDENTIAL_HEADERS.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`]),
  "api_key",
  "*.api_key",
  "apiKey",
  "*.apiKey",
  "key",
  "*.key",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "body",
  "*.body",
  "messages",
  "*.messages",
  "prompt",
  "*.prompt",
  "content",
  "*.content",
  "completion",
  "*.completion",
];

export interface LogOptions {
  level?: string;
  /** Extra fields on every line, e.g. `{ service: "ledger" }`. */
  base?: Record<string, unknown>;
  /** Destination stream; defaults to stdout. Tests pass a buffer to assert redaction. */
  destination?: pino.DestinationStream;
  /** `json` (one object per line) or `pretty` (readable). Default: JSON into `destination`; on stdout, LOG_FORMAT (`logFormatOf`). */
  format?: LogFormat;
}

export type LogFormat = "json" | "pretty";

/**
 * LOG_FORMAT: `json` or `pretty`; unset, lines are readable on a terminal and JSON anywhere else (a
 * file, a pipe, a container's log collector). Any other value is refused, naming the setting.
 */
export function logFormatOf(value: string | undefined, isTerminal: boolean): LogFormat {
  if (value === undefined || value === "") return isTerminal ? "pretty" : "json";
  if (value === "json" || value === "pretty") return value;
  throw Object.assign(new Error(`invalid configuration:\n  LOG_FORMAT: must be json or pretty (got ${JSON.stringify(value)})`), {
    operatorFacing: true as const,
  });
}

/**
 * Builds the logger every service uses, with redaction of secrets and bodies on by default: JSON
 * lines, or readable ones on a terminal (LOG_FORMAT).
 */
export function createLogger(opts: LogOptions = {}): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? "info",
    base: opts.base ?? {},
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  // A destination given in code (a test's buffer) gets JSON unless asked; stdout follows LOG_FORMAT.
  const format = opts.format ?? (opts.destination ? "json" : logFormatOf(process.env.LOG_FORMAT, process.stdout.isTTY === true));
  if (format === "pretty") {
    // In the process, not a worker thread: a terminal is a person reading, not a log pipeline.
    const readable = pretty({
      destination: opts.destination ?? 1,
      colorize: opts.destination === undefined && process.stdout.isTTY === true,
      translateTime: "SYS:HH:MM:ss.l",
      // "[12:00:00.000] INFO: ledger ledger.lease.granted", its fields on the lines below.
      ignore: "pid,hostname,service",
      messageFormat: "{if service}{service} {end}{msg}",
      sync: true,
    });
    return pino(options, readable);
  }
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/**
 * An error whose message alone tells an operator what to fix (a bad setting, a data directory in
 * use): it carries `operatorFacing: true` and is printed without a stack. Structural, so the
 * libraries that throw one need not depend on this one.
 */
export interface OperatorFacing {
  readonly operatorFacing: true;
}

/**
 * The `catch` of a service's `main()`: prints `<name> failed to start: <why>` on stderr and exits 1.
 * An operator-facing error is its message alone; anything else (a bug) keeps its stack. Plain text,
 * not a log line: the logger may not exist yet (the configuration it reads was the problem).
 */
export function exitOnStartFailure(
  name: string,
  out: { write(text: string): unknown; exit(code: number): unknown } = { write: (t) => process.stderr.write(t), exit: (c) => process.exit(c) },
): (err: unknown) => void {
  return (err) => {
    const operator = err instanceof Error && (err as Partial<OperatorFacing>).operatorFacing === true;
    const why = err instanceof Error ? (operator ? err.message : (err.stack ?? err.message)) : String(err);
    out.write(`${name} failed to start: ${why}\n`);
    out.exit(1);
  };
}

/** Installs the one process-level handler for unhandled rejections and uncaught exceptions. */
export function installProcessHandlers(log: Logger): void {
  process.on("unhandledRejection", (reason) => {
    log.error({ err: reason }, "process.unhandled_rejection");
  });
  process.on("uncaughtException", (err) => {
    log.fatal({ err }, "process.uncaught_exception");
    process.exit(1);
  });
}

export { stopOnSignals, runShutdown, type ShutdownStep, type StopOptions } from "./shutdown";
