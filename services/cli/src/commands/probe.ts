import type { Logger } from "@router/logging";

export interface ProbeOptions {
  url: string | undefined;
  region: string | undefined;
  /** The gateway's ROUTER_PROBE_TOKEN, which its POST /v1/status/probes requires. */
  token: string | undefined;
  intervalSeconds: number;
  timeoutMs: number;
  once: boolean;
}

const REGION = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** A week of results a minute apart: what the gateway still takes late (PROBE_REPORT_MAX_AGE_MS). */
const MAX_UNDELIVERED = 7 * 24 * 60;

interface ProbeResult {
  region: string;
  up: boolean;
  at: string;
}

/** One probe: up when `GET /health` answers 200 with `status: "ok"` within the timeout. */
async function probeOnce(healthUrl: string, timeoutMs: number): Promise<{ up: boolean; status: number | null; ms: number; error?: string }> {
  const started = performance.now();
  try {
    const res = await fetch(healthUrl, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    const body = (await res.json().catch(() => null)) as { status?: unknown } | null;
    return { up: res.status === 200 && body?.status === "ok", status: res.status, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { up: false, status: null, ms: Math.round(performance.now() - started), error: err instanceof Error ? err.name : String(err) };
  }
}

/** Refused for good: `tokenRefused` (401, 403) stops the probe; any other (a result too old) is dropped. */
class ReportRefused extends Error {
  constructor(
    message: string,
    readonly tokenRefused: boolean,
  ) {
    super(message);
  }
}

/** Sends one result; throws ReportRefused on a 4xx, any other error when it may go through later. */
async function report(reportUrl: string, token: string, result: ProbeResult, timeoutMs: number): Promise<void> {
  const res = await fetch(reportUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(result),
    signal: AbortSignal.timeout(timeoutMs),
    redirect: "manual",
  });
  if (res.status === 201) return;
  const body = (await res.json().catch(() => null)) as { error?: { message?: unknown } } | null;
  const why = `POST /v1/status/probes answered ${res.status}${typeof body?.error?.message === "string" ? `: ${body.error.message}` : ""}`;
  if (res.status >= 400 && res.status < 500 && res.status !== 429) throw new ReportRefused(why, res.status === 401 || res.status === 403);
  throw new Error(why);
}

/**
 * `probe --url <gateway> --region <name>`: calls the gateway's /health every interval (a minute by
 * default) from where it runs and reports each result to the gateway's `POST /v1/status/probes`
 * with ROUTER_PROBE_TOKEN, for `GET /v1/status/uptime`. It holds no database credential. Results the
 * gateway could not take (it was down: the ones that matter) are kept, up to a week, and sent with
 * their time once it answers. Run one per region, outside the gateway's own cluster.
 */
export async function runProbe(log: Logger, opts: ProbeOptions, signal: AbortSignal): Promise<number> {
  if (!opts.url || !/^https?:\/\//.test(opts.url)) {
    process.stderr.write("--url: required, the gateway's base URL (http:// or https://)\n");
    return 2;
  }
  if (!opts.region || !REGION.test(opts.region)) {
    process.stderr.write("--region: required, lower-case letters, digits and dashes (at most 40), e.g. eu-west\n");
    return 2;
  }
  if (!opts.token) {
    process.stderr.write("ROUTER_PROBE_TOKEN: required, the token the gateway's POST /v1/status/probes takes (the gateway's own ROUTER_PROBE_TOKEN)\n");
    return 2;
  }
  const healthUrl = new URL("/health", opts.url).toString();
  const reportUrl = new URL("/v1/status/probes", opts.url).toString();
  const undelivered: ProbeResult[] = [];
  for (;;) {
    const at = new Date();
    const result = await probeOnce(healthUrl, opts.timeoutMs);
    undelivered.push({ region: opts.region, up: result.up, at: at.toISOString() });
    if (undelivered.length > MAX_UNDELIVERED) undelivered.shift();
    // Oldest first; the first that fails stops the round, the rest waits for the next.
    while (undelivered.length > 0) {
      try {
        await report(reportUrl, opts.token, undelivered[0]!, opts.timeoutMs);
        undelivered.shift();
      } catch (err) {
        if (err instanceof ReportRefused && err.tokenRefused) {
          process.stderr.write(`probe: the gateway refused the probe token (${err.message})\n`);
          return 1;
        }
        if (err instanceof ReportRefused) {
          log.warn({ region: opts.region, at: undelivered[0]?.at, err: err.message }, "probe.report_dropped");
          undelivered.shift();
          continue;
        }
        log.warn({ region: opts.region, undelivered: undelivered.length, err: err instanceof Error ? err.message : String(err) }, "probe.report_failed");
        break;
      }
    }
    log.info({ region: opts.region, ...result, undelivered: undelivered.length }, "probe.recorded");
    if (opts.once || signal.aborted) {
      if (undelivered.length === 0) return 0;
      process.stderr.write(`probe: ${undelivered.length} result(s) not delivered to ${reportUrl}\n`);
      return 1;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, opts.intervalSeconds * 1000);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    if (signal.aborted) return 0;
  }
}
