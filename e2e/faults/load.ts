import { gatewayClient } from "@router/testkit";

/** What one request of the load got back. */
export interface Outcome {
  streamed: boolean;
  startedAt: number;
  endedAt: number;
  /** HTTP status, or 0 when the connection broke before an answer. */
  status: number;
  /** A 2xx answer, or a stream that ended with its usage and `[DONE]` and no error chunk. */
  served: boolean;
  /** The generation id the client saw (served answers always carry one). */
  id?: string;
  /** Why it was not served: the error code, or the transport error. */
  failure?: string;
}

export interface LoadPlan {
  gatewayUrl: string;
  key: string;
  /** Requests started per second (open loop: a slow answer never delays the next start). */
  perSecond: number;
  durationMs: number;
  /** Called once, this long after the first request started; the load keeps running meanwhile. */
  faultAtMs?: number;
  fault?: () => Promise<void>;
}

const MODEL = "openai/gpt-4o-mini";

/**
 * Open-loop load against one gateway, every other request streamed, with a fault injected part
 * way through. Resolves when every request has ended (answered, refused or cut).
 */
export async function runLoad(plan: LoadPlan): Promise<{ outcomes: Outcome[]; faultError?: unknown }> {
  const client = gatewayClient(plan.gatewayUrl, plan.key);
  const total = Math.round((plan.perSecond * plan.durationMs) / 1000);
  const gapMs = 1000 / plan.perSecond;
  const started = Date.now();
  const requests: Promise<Outcome>[] = [];
  let faultError: unknown;
  const fault =
    plan.fault === undefined
      ? Promise.resolve()
      : new Promise((r) => setTimeout(r, plan.faultAtMs ?? 0)).then(plan.fault).catch((err: unknown) => void (faultError = err));
  for (let i = 0; i < total; i++) {
    const due = started + i * gapMs;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    requests.push(i % 2 === 0 ? plainRequest(client) : streamedRequest(client));
  }
  const outcomes = await Promise.all(requests);
  await fault;
  return { outcomes, faultError };
}

type Client = ReturnType<typeof gatewayClient>;
const body = { model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "Count to eight" }] };

async function plainRequest(client: Client): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const res = await client.post("/v1/chat/completions", body);
    const id = typeof res.json.id === "string" ? res.json.id : undefined;
    const served = res.status >= 200 && res.status < 300 && id !== undefined && Array.isArray(res.json.choices);
    return {
      streamed: false,
      startedAt,
      endedAt: Date.now(),
      status: res.status,
      served,
      id,
      failure: served ? undefined : errorCodeOf(res.text),
    };
  } catch (err) {
    return { streamed: false, startedAt, endedAt: Date.now(), status: 0, served: false, failure: transportError(err) };
  }
}

async function streamedRequest(client: Client): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const res = await client.stream(body);
    const id = res.chunks.find((c) => typeof c.id === "string")?.id as string | undefined;
    const error = res.chunks.find((c) => c.error)?.error as { code?: string } | undefined;
    const complete = res.done && error === undefined && res.chunks.some((c) => c.usage);
    const served = res.status === 200 && complete && id !== undefined;
    let failure: string | undefined;
    if (!served) failure = error?.code ?? (res.status === 200 ? "stream cut" : errorCodeOf(res.text));
    return { streamed: true, startedAt, endedAt: Date.now(), status: res.status, served, id, failure };
  } catch (err) {
    return { streamed: true, startedAt, endedAt: Date.now(), status: 0, served: false, failure: transportError(err) };
  }
}

/** The code of an error envelope, else the start of the text. */
function errorCodeOf(text: string): string {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    if (typeof code === "string") return code;
  } catch {
    // not JSON: the text itself says what came back
  }
  return text.slice(0, 80);
}

function transportError(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
  return `transport: ${cause ?? (err instanceof Error ? err.message : String(err))}`;
}

/** The generation ids of the served answers. */
export const servedIds = (outcomes: Outcome[]): string[] => outcomes.flatMap((o) => (o.served && o.id ? [o.id] : []));

/** How many answers of each kind of failure, e.g. `{"503 router.routing_unavailable": 4}`. */
export function failureCounts(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    if (o.served) continue;
    const label = `${o.status} ${o.failure ?? ""}`.trim();
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/** From `since` (a fault, or a restart) to the start of the first request after it that was served. */
export function firstServedAfter(outcomes: Outcome[], since: number): number | undefined {
  const starts = outcomes.filter((o) => o.served && o.startedAt >= since).map((o) => o.startedAt);
  return starts.length === 0 ? undefined : Math.min(...starts) - since;
}
