import pino, { type Logger, type LoggerOptions } from "pino";

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
}

/** Builds the JSON logger every service uses, with redaction of secrets and bodies on by default. */
export function createLogger(opts: LogOptions = {}): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? "info",
    base: opts.base ?? {},
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
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

/**
 * Closes the process's servers and clients once on SIGTERM or SIGINT (logging `<name>.stopping`),
 * then exits: 0 after a clean close, 1 when closing failed.
 */
export function stopOnSignals(log: Logger, name: string, close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${name}.stopping`);
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, `${name}.stop_failed`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
