import type { Logger } from "pino";

/** One stage of a process's ordered shutdown. */
export interface ShutdownStep {
  /** Named in the log lines, e.g. `gateway`, `bus.drain`, `store`. */
  step: string;
  run: () => unknown;
  /**
   * How long the step may take before the shutdown moves on without it (logged as
   * `<name>.stop_step_timed_out`). Default 30 s; a step with its own deadline (the gateway's stream
   * drain) gets a little more than that.
   */
  timeoutMs?: number;
}

const DEFAULT_STEP_TIMEOUT_MS = 30_000;
const REPEAT_GRACE_MS = 1_000;
/** What a step that ran out of time resolves to: no step's own result can be mistaken for it. */
const TIMED_OUT = Symbol("timed out");

/**
 * Runs the steps in order, each bounded by its timeout, and logs each one's time
 * (`<name>.stop_step`) and any timeout or failure; the shutdown always goes on to the next step, so
 * the stores are closed even after a stuck stage. Resolves whether every step finished cleanly.
 */
export async function runShutdown(log: Logger, name: string, steps: ShutdownStep[]): Promise<boolean> {
  let clean = true;
  for (const { step, run, timeoutMs = DEFAULT_STEP_TIMEOUT_MS } of steps) {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs)));
    try {
      const outcome = await Promise.race([Promise.resolve().then(run), timedOut]);
      if (outcome === TIMED_OUT) {
        clean = false;
        log.warn({ step, timeoutMs }, `${name}.stop_step_timed_out`);
      } else {
        log.info({ step, ms: Date.now() - started }, `${name}.stop_step`);
      }
    } catch (err) {
      clean = false;
      log.error({ step, err }, `${name}.stop_step_failed`);
    } finally {
      clearTimeout(timer);
    }
  }
  return clean;
}

/**
 * On the first SIGTERM or SIGINT, runs the ordered shutdown (`<name>.stopping`, then each step) and
 * exits: 0 when every step finished cleanly, 1 otherwise. A second signal a second or more later (a
 * second Ctrl-C) exits at once with 1, for a person who will not wait. Closer repeats are one
 * signal: a terminal's Ctrl-C reaches node both directly and forwarded by `npm start`.
 */
export function stopOnSignals(log: Logger, name: string, steps: ShutdownStep[]): void {
  let stoppingSince: number | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < REPEAT_GRACE_MS) return;
      log.warn({ signal }, `${name}.stop_forced`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    log.info({ signal }, `${name}.stopping`);
    void runShutdown(log, name, steps).then((clean) => process.exit(clean ? 0 : 1));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
