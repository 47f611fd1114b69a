import { Pool } from "undici";

export interface LoadResult {
  rate: number;
  seconds: number;
  sent: number;
  ok: number;
  failed: number;
  /** Milliseconds: full response for JSON, first chunk with content (first token) for streams. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Per request, when asked for: when it was sent (Unix epoch ms, to line up with other logs) and its latency (failures are -1). */
  trace?: Array<[sentAtEpochMs: number, latencyMs: number]>;
}

export interface LoadTarget {
  origin: string;
  path: string;
  /** Default POST. */
  method?: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Sent in turn instead of `body` (request i sends bodies[i % length]): turns of several runs, say. */
  bodies?: string[];
  stream: boolean;
  /** Streams: what marks the first content event; default an OpenAI chat chunk with content. */
  firstContent?: RegExp;
}

/** An OpenAI chat stream event that carries content (the first token). */
export const CHAT_CONTENT = /(^|\n)data: \{.*"content":"[^"]/;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)] ?? Number.NaN;
}

async function oneRequest(pool: Pool, t: LoadTarget, body: string | undefined): Promise<number> {
  const start = process.hrtime.bigint();
  const res = await pool.request({ path: t.path, method: t.method ?? "POST", headers: t.headers, body });
  if (res.statusCode !== 200) {
    await res.body.text();
    throw new Error(`status ${res.statusCode}`);
  }
  if (!t.stream) {
    await res.body.text();
    return Number(process.hrtime.bigint() - start) / 1e6;
  }
  // Time to the first token: keepalive comments (": ...") and a role-only first chunk do not count.
  let firstContentMs: number | null = null;
  let buffered = "";
  for await (const chunk of res.body) {
    if (firstContentMs === null) {
      buffered += (chunk as Buffer).toString("utf8");
      if ((t.firstContent ?? CHAT_CONTENT).test(buffered)) firstContentMs = Number(process.hrtime.bigint() - start) / 1e6;
    }
  }
  if (firstContentMs === null) throw new Error("stream carried no content chunk");
  return firstContentMs;
}

/**
 * Open-loop load at a fixed request rate: requests are started on schedule whether or not earlier
 * ones finished, so a slow server shows up as latency rather than as a lower rate.
 */
export async function runLoad(t: LoadTarget, rate: number, seconds: number, opts: { trace?: boolean } = {}): Promise<LoadResult> {
  const pool = new Pool(t.origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  let failed = 0;
  const inflight: Promise<void>[] = [];
  const total = Math.round(rate * seconds);
  const intervalNs = 1e9 / rate;
  const trace: Array<[number, number]> | undefined = opts.trace ? [] : undefined;
  const begin = process.hrtime.bigint();
  for (let i = 0; i < total; i++) {
    const due = begin + BigInt(Math.round(i * intervalNs));
    const waitMs = Number(due - process.hrtime.bigint()) / 1e6;
    if (waitMs > 1) await new Promise((r) => setTimeout(r, waitMs));
    const entry: [number, number] | undefined = trace ? [performance.timeOrigin + performance.now(), -1] : undefined;
    if (entry) trace?.push(entry);
    inflight.push(
      oneRequest(pool, t, t.bodies ? t.bodies[i % t.bodies.length] : t.body).then(
        (ms) => {
          latencies.push(ms);
          if (entry) entry[1] = ms;
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(inflight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    rate,
    seconds,
    sent: total,
    ok: latencies.length,
    failed,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? Number.NaN,
    trace,
  };
}

/**
 * How long a measured row first runs its own load, unmeasured (`BENCH_LEAD_IN_SECONDS`, default 3):
 * a row then measures the server at that rate, not its way out of the idle row before it.
 */
export const LEAD_IN_SECONDS = leadInSeconds(process.env.BENCH_LEAD_IN_SECONDS);

function leadInSeconds(value: string | undefined): number {
  const seconds = Number(value ?? "3");
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new Error(`BENCH_LEAD_IN_SECONDS: expected seconds, 0 or more (got ${JSON.stringify(value)})`);
  }
  return seconds;
}

/** The row's own load for `LEAD_IN_SECONDS`, its results dropped. */
export async function leadIn(t: LoadTarget, rate: number): Promise<void> {
  if (LEAD_IN_SECONDS > 0) await runLoad(t, rate, LEAD_IN_SECONDS);
}
