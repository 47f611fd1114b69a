import { GATEWAY_MIGRATIONS_DIR, recordProbe } from "@router/gateway";
import { migrate } from "@router/db";
import type { Logger } from "@router/logging";
import type { Stores } from "../stores";

export interface ProbeOptions {
  url: string | undefined;
  region: string | undefined;
  intervalSeconds: number;
  timeoutMs: number;
  once: boolean;
}

const REGION = /^[a-z0-9][a-z0-9-]{0,39}$/;

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

/**
 * `probe --url <gateway> --region <name>`: calls the gateway's /health every interval (a minute by
 * default) from where it runs and counts each result for `GET /v1/status/uptime`. Run one per
 * region, outside the gateway's own cluster, so what it measures is what clients see.
 */
export async function runProbe(stores: Stores, log: Logger, opts: ProbeOptions, signal: AbortSignal): Promise<number> {
  if (!opts.url || !/^https?:\/\//.test(opts.url)) {
    process.stderr.write("--url: required, the gateway's base URL (http:// or https://)\n");
    return 2;
  }
  if (!opts.region || !REGION.test(opts.region)) {
    process.stderr.write("--region: required, lower-case letters, digits and dashes (at most 40), e.g. eu-west\n");
    return 2;
  }
  if (stores.isEmbedded) {
    process.stderr.write("probe needs DATABASE_URL: it records into the gateway's database from another process\n");
    return 2;
  }
  const db = await stores.open("gateway");
  await migrate(db, GATEWAY_MIGRATIONS_DIR);
  const healthUrl = new URL("/health", opts.url).toString();
  for (;;) {
    const result = await probeOnce(healthUrl, opts.timeoutMs);
    await recordProbe(db, { region: opts.region, at: new Date(), up: result.up });
    log.info({ region: opts.region, ...result }, "probe.recorded");
    if (opts.once || signal.aborted) return 0;
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
