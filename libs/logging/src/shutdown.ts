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
  /**
   * While the step runs: what it waits for, in words ("2 streams to finish"), and until when it
   * waits (epoch ms); undefined when it waits for nothing a person would want to know about.
   */
  waitingFor?: () => { what: string; untilMs: number } | undefined;
  /**
   * Called on a second signal while (or before) the step runs: stop waiting and finish now, losing
   * nothing already done (the gateway cuts its streams, which are still recorded).
   */
  hurry?: () => void;
}

/** How `stopOnSignals` talks to a person at a terminal. */
export interface StopOptions {
  /**
   * Prints a line for a person: the countdown of what the stop waits for, and what a second Ctrl-C
   * does. Unset (a service under an orchestrator): log lines only.
   */
  say?: (line: string) => void;
  /** After a second signal, the longest the rest of the shutdown may take before the process exits. Default 10 s. */
  hurriedMs?: number;
}

const DEFAULT_STEP_TIMEOUT_MS = 30_000;
/**
 * Signals closer than this are one: a terminal's Ctrl-C reaches node both directly and forwarded by
 * npm (`npm start`), milliseconds apart. A person's second press comes later.
 */
const REPEAT_GRACE_MS = 500;
const DEFAULT_HURRIED_MS = 10_000;
const COUNTDOWN_EVERY_MS = 1_000;
/** What a step that ran out of time resolves to: no step's own result can be mistaken for it. */
const TIMED_OUT = Symbol("timed out");

/**
 * Runs the steps in order, each bounded by its timeout, and logs each one's time
 * (`<name>.stop_step`) and any timeout or failure; the shutdown always goes on to the next step, so
 * the stores are closed even after a stuck stage. Resolves whether every step finished cleanly.
 */
export async function runShutdown(
  log: Logger,
  name: string,
  steps: ShutdownStep[],
  onStep: (step: ShutdownStep) => void = () => undefined,
): Promise<boolean> {
  let clean = true;
  for (const current of steps) {
    const { step, run, timeoutMs = DEFAULT_STEP_TIMEOUT_MS } = current;
    onStep(current);
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
 * exits: 0 when every step finished cleanly, 1 otherwise. With `say`, a person sees what the stop
 * waits for, counting down each second ("waiting for 2 streams to finish, 8 s left"). A second
 * signal (a second Ctrl-C) hurries it (`<name>.stop_hurried`): the running step and the ones after
 * it finish now (the gateway cuts its streams, which are still recorded), the later steps still
 * write and flush what was served, and the process exits 1 within `hurriedMs`. A third signal exits
 * at once (`<name>.stop_forced`).
 */
export function stopOnSignals(log: Logger, name: string, steps: ShutdownStep[], opts: StopOptions = {}): void {
  const { say, hurriedMs = DEFAULT_HURRIED_MS } = opts;
  let lastSignalAt: number | undefined;
  let hurried = false;
  let current: ShutdownStep | undefined;
  let countdown: NodeJS.Timeout | undefined;
  const hurryStep = (step: ShutdownStep) => {
    try {
      step.hurry?.();
    } catch (err) {
      log.error({ step: step.step, err }, `${name}.stop_hurry_failed`);
    }
  };
  const sayWaiting = () => {
    const waiting = current?.waitingFor?.();
    if (!say || !waiting) return;
    const left = Math.max(0, Math.round((waiting.untilMs - Date.now()) / 1000));
    say(hurried ? `stopping now: waiting for ${waiting.what}` : `waiting for ${waiting.what}, ${left} s left; Ctrl-C again to stop now`);
  };
  const stop = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (lastSignalAt !== undefined && now - lastSignalAt < REPEAT_GRACE_MS) return;
    const first = lastSignalAt === undefined;
    lastSignalAt = now;
    if (first) {
      log.info({ signal }, `${name}.stopping`);
      say?.("stopping: finishing what is in flight; Ctrl-C again to stop now");
      countdown = setInterval(sayWaiting, COUNTDOWN_EVERY_MS);
      void runShutdown(log, name, steps, (step) => {
        current = step;
        if (hurried) hurryStep(step);
        // Once the step has begun (its wait is known), not a second later.
        setImmediate(sayWaiting);
      }).then((clean) => {
        clearInterval(countdown);
        process.exit(clean && !hurried ? 0 : 1);
      });
      return;
    }
    if (!hurried) {
      hurried = true;
      log.warn({ signal, step: current?.step }, `${name}.stop_hurried`);
      say?.("stopping now: cutting what is in flight, then writing what was served; Ctrl-C again to exit at once (may lose it)");
      if (current) hurryStep(current);
      // The rest still runs (the records are written, the outbox and the store flushed), bounded.
      setTimeout(() => {
        log.warn({ signal, step: current?.step, hurriedMs }, `${name}.stop_forced`);
        process.exit(1);
      }, hurriedMs).unref();
      return;
    }
    log.warn({ signal, step: current?.step }, `${name}.stop_forced`);
    process.exit(1);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
