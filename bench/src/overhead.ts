import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, gatewayClient, startStack, type JsonResponse } from "@router/testkit";
import { DEFAULT_BATCH_WAIT_MS } from "@router/bus";
import { TOPICS } from "@router/proto";
import { catchUpMs, REQUEST_COMPLETED_GROUPS } from "./consumer-lag";
import { cpuPerRequest, sampleCpu, type CpuSubjects } from "./cpu";
import { pauseDamonMonitors, runningDamonMonitors } from "./damon";
import { gcPauses, overheadPercentileMs, scrapeGateway } from "./gateway-overhead";
import { AZURE_BENCH_DEPLOYMENT, directChat, FAKE_PROVIDER_KEY, rssMb, startFake } from "./bench-processes";
import { leadIn, runLoad, type LoadResult, type LoadTarget } from "./load";
import { startPeer, type PeerGateway } from "./peer-gateway";
import { ROUNDS, showRounds } from "./rounds";

/**
 * `make bench`: the gateway's added latency over calling the fake upstream directly, at fixed
 * request rates, non-streaming (full response) and streaming (time to first content chunk), with
 * the services as separate processes on Postgres, Redis and the Redis Streams bus. Prints a table
 * and writes bench/results/overhead.json. Not a test: it asserts nothing.
 */
const RATES = (process.env.BENCH_RATES ?? "300").split(",").map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? "10");
/**
 * Only the gateway rows whose scenario contains this text (and the direct rows), e.g. "run turns";
 * alternatives separated by `|`, e.g. "(key without ceiling)|(key with hard ceiling)".
 */
const ONLY = process.env.BENCH_ONLY?.split("|").filter(Boolean);
/** When set, every row's per-request trace (send time, latency) is written there as CSV, to find when slow requests happened. */
const TRACE_DIR = process.env.BENCH_TRACE_DIR;
/**
 * Peer gateways measured in the same run (BENCH_PEER=portkey, passthrough or both, comma-separated):
 * their rows follow each direct row, and Router's CPU per request is set against each peer's of the
 * same round: the whole stack against Portkey's, the gateway process against the passthrough floor's.
 */
const PEER_NAMES = [...new Set((process.env.BENCH_PEER ?? "").split(",").filter(Boolean))];

const BENCH_AGENT = "bench-agent";
const BUDGETS_VARIANT = "ceiling, workspace and agent budgets";
const TURNS_VARIANT = "ceiling, workspace and agent budgets, run turns";
/** The same request to a cloud: an organisation holding an Azure OpenAI resource instead of an OpenAI key. */
const AZURE_VARIANT = "Azure OpenAI, key without ceiling";
/** The budgeted row's requests are turns of this many runs in turn, as agents' loops would send them. */
const BENCH_RUNS = 64;
const GUARDED_VARIANT = "guardrail with 26 content filters, preferences";

/** What runs beside the stack: the load generator, the fake provider, the kernel's memory monitor, the peer gateways. */
const BESIDE_THE_STACK = new Set(["load", "fake", "kdamond", ...PEER_NAMES]);

/** The stack's CPU per request: every service, Postgres and Redis (what issue targets compare with a peer gateway). */
function stackCpu(byProcess: Record<string, number>): number {
  return Object.entries(byProcess).reduce((sum, [name, ms]) => (BESIDE_THE_STACK.has(name) ? sum : sum + ms), 0);
}

/** BENCH_ENV="NAME=value ..." reaches every service, e.g. "GATEWAY_LEASE_USE_MS=0" to compare without leases. */
function benchEnv(): Record<string, string> {
  const pairs = (process.env.BENCH_ENV ?? "").split(" ").filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf("=");
      if (at <= 0) throw new Error(`BENCH_ENV: "${pair}" is not NAME=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

function writeTrace(dir: string, name: string, trace: Array<[number, number]>): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name.replace(/[^a-z0-9-]+/gi, "-")}.csv`);
  writeFileSync(file, `sent_at_epoch_ms,latency_ms\n${trace.map(([at, ms]) => `${at.toFixed(2)},${ms.toFixed(2)}`).join("\n")}\n`);
}

interface Row {
  round: number;
  scenario: string;
  rate: number;
  result: LoadResult;
  cpuMsPerRequest: Record<string, number>;
  /** Through the gateway only: its own `gateway_overhead_seconds`, as bucket upper bounds in ms. */
  gatewayOwn?: { p50: number | null; p99: number | null; gc: string };
  /** Gateway rows: ms after the load ended until every consumer group had taken every event (null: not within 30 s). */
  consumersCaughtUpMs?: number | null;
}

function body(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    stream,
    max_tokens: 64,
    messages: [
      { role: "system", content: "You are a terse assistant." },
      { role: "user", content: "Name one colour." },
    ],
  });
}

/** The same conversation in the other ingresses' formats (docs/ingress.md). */
/**
 * `store: false` keeps the row what it has always measured (the format's own cost); the stored row
 * beside it takes the Responses API's default (`store` true), one sealed row written per answer.
 */
function responsesBody(model: string, stream: boolean, store = false): string {
  return JSON.stringify({ model, stream, max_output_tokens: 64, instructions: "You are a terse assistant.", input: "Name one colour.", ...(store ? {} : { store: false }) });
}

function messagesBody(model: string, stream: boolean): string {
  return JSON.stringify({ model, stream, max_tokens: 64, system: "You are a terse assistant.", messages: [{ role: "user", content: "Name one colour." }] });
}

/** A batch of four short texts, as a retrieval pipeline sends them. */
function embeddingsBody(model: string): string {
  return JSON.stringify({ model, input: ["red", "green", "blue", "the quick brown fox"] });
}

/** The ingress rows: each against the direct row of the same upstream call, beside the chat route's row. */
const INGRESS_ROWS = ["responses", "messages"] as const;
const FIRST_CONTENT = { responses: /"type":"response\.output_text\.delta"/, messages: /"type":"text_delta"/ };

async function main(): Promise<void> {
  const damonRunning = runningDamonMonitors();
  const resumeDamon = process.env.BENCH_PAUSE_DAMON === "1" ? pauseDamonMonitors() : null;
  if (resumeDamon) {
    // Node's default on these signals skips `finally`: the monitor must not stay off after a Ctrl-C.
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      process.once(signal, () => {
        resumeDamon();
        process.exit(code);
      });
    }
  }
  try {
    await measureAll(damonRunning, resumeDamon !== null);
  } finally {
    resumeDamon?.();
  }
}

async function measureAll(damonRunning: string[], damonPaused: boolean): Promise<void> {
  const fake = await startFake();
  // BENCH_NODE_ARGS reaches the services, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them under load;
  // BENCH_NODE_ARGS_FOR="ledger gateway" limits it to those (profiling all of them saturates a small box).
  const gatewayMetricsPort = await freePort();
  const stack = await startStack({
    providerBaseUrls: { openai: fake.url, azure: fake.azureUrl },
    // The test stack gathers consumer batches for less than the product does: measure the product's.
    extraEnv: { LOG_LEVEL: "warn", GATEWAY_METRICS_PORT: String(gatewayMetricsPort), ROUTER_BUS_BATCH_WAIT_MS: String(DEFAULT_BATCH_WAIT_MS), ...benchEnv() },
    nodeArgs: process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean),
    nodeArgsFor: process.env.BENCH_NODE_ARGS_FOR?.split(" ").filter(Boolean),
  });
  const peers: PeerGateway[] = [];
  try {
    const org = await stack.createOrg("Bench");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: FAKE_PROVIDER_KEY });
    const keyOf = (r: JsonResponse): string => (r.json as { data: { key: string } }).data.key;
    const plainKey = keyOf(await mgmt.post("/v1/keys", { name: "no-ceiling" }));
    const ceilingKey = keyOf(
      await mgmt.post("/v1/keys", { name: "hard-ceiling", limit: 1_000_000, limit_reset: "monthly", include_byok_in_limit: true }),
    );
    // A key whose requests the ledger's budgets count too: its workspace's and its agent's (never
    // reached): a spend lease covers the key and the budgets (four counter rows). In the turns row
    // each request is also a turn of one of BENCH_RUNS runs, and asks Admit for its run alone.
    const budgeted = (await mgmt.post("/v1/workspaces", { name: "Budgeted" })).json as { data: { id: string } };
    await mgmt.put(`/v1/workspaces/${budgeted.data.id}/budgets/monthly`, { limit_usd: 1_000_000 });
    await mgmt.put(`/v1/agents/${BENCH_AGENT}/budgets/monthly`, { limit_usd: 1_000_000 });
    await mgmt.put(`/v1/agents/${BENCH_AGENT}/budgets/daily`, { limit_usd: 100_000, workspace_id: budgeted.data.id });
    const budgetedKey = keyOf(
      await mgmt.post("/v1/keys", {
        name: "budgeted",
        limit: 1_000_000,
        limit_reset: "monthly",
        include_byok_in_limit: true,
        workspace_id: budgeted.data.id,
      }),
    );

    const azureOrg = await stack.createOrg("Bench on Azure");
    const azureMgmt = gatewayClient(stack.gatewayUrl, azureOrg.managementKey);
    // One resource, as the OpenAI row has one endpoint: a region's credential plans only its region's endpoint.
    const azureResource = await azureMgmt.post("/v1/provider-keys", {
      provider: "azure",
      azure: { endpoint: "https://bench-eu.openai.azure.com", region: "swedencentral", api_key: FAKE_PROVIDER_KEY, deployments: { "openai/gpt-4o-mini": AZURE_BENCH_DEPLOYMENT } },
    });
    if (azureResource.status !== 201) throw new Error(`adding an Azure resource answered ${azureResource.status}: ${azureResource.text}`);
    const azureKey = keyOf(await azureMgmt.post("/v1/keys", { name: "no-ceiling" }));

    const gatewayOrigin = stack.gatewayUrl;
    const direct = (stream: boolean): LoadTarget => directChat(fake, body("gpt-4o-mini", stream), stream);
    // A failed install or a peer that does not forward stops the run before anything is measured.
    for (const name of PEER_NAMES) peers.push(await startPeer(name, direct));
    const peerScenario = (kind: string, p: PeerGateway) => `peer ${kind} (${p.label})`;
    const viaGateway = (stream: boolean, key: string, extraHeaders: Record<string, string> = {}): LoadTarget => ({
      origin: gatewayOrigin,
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...extraHeaders },
      body: body("openai/gpt-4o-mini", stream),
      stream,
    });

    const runs = gatewayClient(stack.gatewayUrl, budgetedKey);
    const runIds: string[] = [];
    for (let i = 0; i < BENCH_RUNS; i++) {
      const opened = await runs.post("/v1/runs", { goal: `bench run ${i}`, budget_usd: 100_000 });
      if (opened.status !== 201) throw new Error(`opening a run answered ${opened.status}: ${JSON.stringify(opened.json)}`);
      runIds.push((opened.json as { data: { id: string } }).data.id);
    }
    const viaBudgets = (stream: boolean): LoadTarget => viaGateway(stream, budgetedKey, { "x-router-agent": BENCH_AGENT });
    const viaTurns = (stream: boolean): LoadTarget => ({
      ...viaBudgets(stream),
      bodies: runIds.map((runId) => JSON.stringify({ ...(JSON.parse(body("openai/gpt-4o-mini", stream)) as object), run_id: runId })),
    });
    // A key under a guardrail every request passes (allowlists, a region, all six builtin detectors and
    // 20 patterns of its own), asking with provider preferences that every endpoint passes too.
    const guardedKey = (await mgmt.post("/v1/keys", { name: "guarded" })).json as { data: { key: string; hash: string } };
    const guardrail = (
      await mgmt.post("/v1/guardrails", {
        name: "bench",
        allowed_models: ["openai/gpt-4o-mini"],
        allowed_providers: ["openai"],
        allowed_data_regions: ["us"],
        content_filter_builtins: ["email", "phone", "credit_card", "ssn", "ip_address", "api_key"],
        content_filters: Array.from({ length: 20 }, (_, i) => ({ name: `rule-${i}`, pattern: `(?i)codename-${i}\\b`, action: "block" })),
        filter_allowlist: ["support@example.com"],
      })
    ).json as { data: { id: string } };
    await mgmt.post(`/v1/guardrails/${guardrail.data.id}/assignments`, { subject_type: "key", subject_id: guardedKey.data.hash });
    const viaGuarded = (stream: boolean): LoadTarget => ({
      ...viaGateway(stream, guardedKey.data.key),
      body: JSON.stringify({
        ...(JSON.parse(body("openai/gpt-4o-mini", stream)) as object),
        provider: { order: ["openai"], require_parameters: true, data_collection: "deny", max_price: { prompt: 100, completion: 100 } },
      }),
    });
    const viaIngress = (ingress: (typeof INGRESS_ROWS)[number], stream: boolean): LoadTarget => ({
      origin: gatewayOrigin,
      path: `/v1/${ingress}`,
      headers: { "content-type": "application/json", authorization: `Bearer ${plainKey}` },
      body: ingress === "responses" ? responsesBody("openai/gpt-4o-mini", stream) : messagesBody("openai/gpt-4o-mini", stream),
      stream,
      firstContent: FIRST_CONTENT[ingress],
    });
    const viaStoredResponses: LoadTarget = { ...viaIngress("responses", false), body: responsesBody("openai/gpt-4o-mini", false, true) };
    const directEmbeddings: LoadTarget = {
      origin: fake.origin,
      path: "/v1/embeddings",
      headers: { "content-type": "application/json", authorization: `Bearer ${FAKE_PROVIDER_KEY}` },
      body: embeddingsBody("text-embedding-3-small"),
      stream: false,
    };
    const viaEmbeddings: LoadTarget = {
      origin: gatewayOrigin,
      path: "/v1/embeddings",
      headers: { "content-type": "application/json", authorization: `Bearer ${plainKey}` },
      body: embeddingsBody("openai/text-embedding-3-small"),
      stream: false,
    };

    const gatewayPid = stack.services.find((s) => s.name === "gateway")?.child.pid;
    const rssBefore = rssMb(gatewayPid);
    // Warm caches, connection pools, the JIT and the databases on every path first, at the measured
    // rate: a shorter, slower warm-up left the first round measurably slower than the next ones.
    const warmRate = Math.max(...RATES);
    for (const stream of [false, true]) {
      for (const t of [direct(stream), ...peers.map((p) => p.target(stream)), viaGateway(stream, plainKey), viaGateway(stream, ceilingKey), viaBudgets(stream), viaTurns(stream), viaGuarded(stream), ...INGRESS_ROWS.map((i) => viaIngress(i, stream)), viaGateway(stream, azureKey)]) {
        await runLoad(t, warmRate, 4);
      }
    }
    for (const t of [directEmbeddings, viaEmbeddings, viaStoredResponses]) await runLoad(t, warmRate, 4);

    // CPU per request of every process on the box, so a row's latency can be read against who spent the cores.
    const cpuSubjects: CpuSubjects = {
      pids: {
        load: process.pid,
        fake: fake.pid,
        ...Object.fromEntries(stack.services.map((s) => [s.name, s.child.pid])),
        ...Object.fromEntries(peers.map((p) => [p.name, p.service.child.pid])),
      },
      // kdamond: the kernel's DAMON memory monitor, where the machine runs one (see runningDamonMonitors).
      commands: { postgres: "postgres", redis: "redis-server", kdamond: "kdamond.0" },
    };
    const rows: Row[] = [];
    const metricsUrl = `http://127.0.0.1:${gatewayMetricsPort}/metrics`;
    const measure = async (round: number, scenario: string, rate: number, target: LoadTarget) => {
      // The direct rows (and the peer's) always run: every added figure is read against them.
      if (ONLY && !scenario.startsWith("direct") && !scenario.startsWith("peer") && !ONLY.some((text) => scenario.includes(text))) return;
      // The direct rows leave the services idle: the row after one would measure their way out of it.
      await leadIn(target, rate);
      const gatewayBefore = await scrapeGateway(metricsUrl);
      const before = sampleCpu(cpuSubjects);
      const { trace, ...result } = await runLoad(target, rate, SECONDS, { trace: TRACE_DIR !== undefined });
      if (TRACE_DIR && trace) writeTrace(TRACE_DIR, `${round}-${scenario}`, trace);
      const consumersCaughtUpMs =
        target.origin === gatewayOrigin ? await catchUpMs(stack.bus, TOPICS.requestCompleted, REQUEST_COMPLETED_GROUPS) : undefined;
      // Consumers work off the events of the last requests after the load ends; let them finish.
      await new Promise((r) => setTimeout(r, 1000));
      const cpuMsPerRequest = cpuPerRequest(before, sampleCpu(cpuSubjects), result.ok);
      const gatewayAfter = await scrapeGateway(metricsUrl);
      const gatewayOwn = target.origin === gatewayOrigin
        ? {
            p50: overheadPercentileMs(gatewayBefore.overhead, gatewayAfter.overhead, 50),
            p99: overheadPercentileMs(gatewayBefore.overhead, gatewayAfter.overhead, 99),
            gc: gcPauses(gatewayBefore, gatewayAfter),
          }
        : undefined;
      rows.push({ round, scenario, rate, result, cpuMsPerRequest, gatewayOwn, consumersCaughtUpMs });
    };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const rate of RATES) {
        for (const stream of [false, true]) {
          const kind = stream ? "stream TTFT" : "non-stream";
          await measure(round, `direct ${kind}`, rate, direct(stream));
          for (const p of peers) await measure(round, peerScenario(kind, p), rate, p.target(stream));
          await measure(round, `gateway ${kind} (key without ceiling)`, rate, viaGateway(stream, plainKey));
          await measure(round, `gateway ${kind} (key with hard ceiling)`, rate, viaGateway(stream, ceilingKey));
          await measure(round, `gateway ${kind} (${BUDGETS_VARIANT})`, rate, viaBudgets(stream));
          await measure(round, `gateway ${kind} (${TURNS_VARIANT})`, rate, viaTurns(stream));
          await measure(round, `gateway ${kind} (${GUARDED_VARIANT})`, rate, viaGuarded(stream));
          await measure(round, `gateway ${kind} (${AZURE_VARIANT})`, rate, viaGateway(stream, azureKey));
          for (const ingress of INGRESS_ROWS) await measure(round, `gateway ${kind} (/v1/${ingress}, key without ceiling)`, rate, viaIngress(ingress, stream));
          // A stream's first token comes before its answer is kept: only the whole answer waits for the write.
          if (!stream) await measure(round, `gateway ${kind} (/v1/responses stored by default, key without ceiling)`, rate, viaStoredResponses);
        }
        await measure(round, "direct embeddings", rate, directEmbeddings);
        await measure(round, "gateway embeddings (/v1/embeddings, key without ceiling)", rate, viaEmbeddings);
      }
    }
    const rssAfter = rssMb(gatewayPid);

    const fmt = (n: number) => n.toFixed(2).padStart(8);
    const label = (r: Row) => (ROUNDS > 1 ? `${r.scenario} #${r.round}` : r.scenario);
    process.stdout.write(`\nRouter gateway overhead (${SECONDS}s per row, open-loop; ms)\n`);
    process.stdout.write(`${"scenario".padEnd(62)} ${"rps".padStart(5)} ${"ok".padStart(6)} ${"fail".padStart(5)} ${"p50".padStart(8)} ${"p90".padStart(8)} ${"p99".padStart(8)}\n`);
    for (const r of rows) {
      process.stdout.write(
        `${label(r).padEnd(62)} ${String(r.rate).padStart(5)} ${String(r.result.ok).padStart(6)} ${String(r.result.failed).padStart(5)} ${fmt(r.result.p50)} ${fmt(r.result.p90)} ${fmt(r.result.p99)}\n`,
      );
    }
    process.stdout.write(`\nCPU ms per request, by process; stack: every service, Postgres and Redis together\n`);
    for (const r of rows) {
      const parts = Object.entries(r.cpuMsPerRequest).map(([name, ms]) => `${name} ${ms.toFixed(2)}`);
      process.stdout.write(`  ${label(r).padEnd(60)} ${parts.join("  ")}  stack ${stackCpu(r.cpuMsPerRequest).toFixed(2)}\n`);
    }
    process.stdout.write(
      `\nThe gateway's own overhead (gateway_overhead_seconds: handler start to response, minus the provider call; bucket bounds) and its GC pauses (count × mean)\n`,
    );
    for (const r of rows) {
      if (r.gatewayOwn) {
        process.stdout.write(`  ${label(r).padEnd(60)} p50 <= ${r.gatewayOwn.p50} ms  p99 <= ${r.gatewayOwn.p99} ms  GC ${r.gatewayOwn.gc}\n`);
      }
    }
    process.stdout.write(`\nConsumer lag: ms after the load ended until every consumer group (activity, routing, reports, runaway, broadcast) had taken every request.completed event\n`);
    for (const r of rows) {
      if (r.consumersCaughtUpMs !== undefined) {
        process.stdout.write(`  ${label(r).padEnd(60)} ${r.consumersCaughtUpMs === null ? "not within 30 s" : `${r.consumersCaughtUpMs} ms`}\n`);
      }
    }
    // Gateway minus direct within each round (the two rows ran back to back), then the median over rounds.
    const added: Array<{ rate: number; kind: string; variant: string; added_p50_ms: number[]; added_p99_ms: number[] }> = [];
    const ingressVariants = INGRESS_ROWS.map((i) => `/v1/${i}, key without ceiling`);
    for (const rate of RATES) {
      for (const kind of ["non-stream", "stream TTFT", "embeddings"]) {
        const variants =
          kind === "embeddings" ? ["/v1/embeddings, key without ceiling"] : ["key without ceiling", "key with hard ceiling", BUDGETS_VARIANT, TURNS_VARIANT, GUARDED_VARIANT, AZURE_VARIANT, ...ingressVariants];
        for (const variant of variants) {
          const entry = { rate, kind, variant, added_p50_ms: [] as number[], added_p99_ms: [] as number[] };
          for (let round = 1; round <= ROUNDS; round++) {
            const find = (scenario: string) => rows.find((r) => r.round === round && r.rate === rate && r.scenario === scenario)?.result;
            const base = find(`direct ${kind}`);
            const gw = find(`gateway ${kind} (${variant})`);
            if (!base || !gw) continue;
            entry.added_p50_ms.push(+(gw.p50 - base.p50).toFixed(2));
            entry.added_p99_ms.push(+(gw.p99 - base.p99).toFixed(2));
          }
          // A row BENCH_ONLY left out has no rounds: nothing to report.
          if (entry.added_p50_ms.length > 0) added.push(entry);
        }
      }
    }
    process.stdout.write(`\nAdded latency (gateway minus direct)${ROUNDS > 1 ? `, median of ${ROUNDS} rounds [each round]` : ""}\n`);
    for (const a of added) {
      process.stdout.write(
        `  ${String(a.rate).padStart(4)} rps  ${a.kind.padEnd(12)} ${a.variant.padEnd(38)} p50 ${showRounds(a.added_p50_ms)}  p99 ${showRounds(a.added_p99_ms)}\n`,
      );
    }
    // The target: an ingress adds no more than 0.2 ms p50 over the chat route (both minus the same direct call).
    process.stdout.write(`\nEach ingress against the chat route (gateway p50 minus chat-route p50, same round)${ROUNDS > 1 ? `, median of ${ROUNDS} rounds [each round]` : ""}\n`);
    for (const rate of RATES) {
      for (const kind of ["non-stream", "stream TTFT"]) {
        for (const variant of ingressVariants) {
          const over: number[] = [];
          for (let round = 1; round <= ROUNDS; round++) {
            const find = (scenario: string) => rows.find((r) => r.round === round && r.rate === rate && r.scenario === scenario)?.result;
            const chat = find(`gateway ${kind} (key without ceiling)`);
            const ingress = find(`gateway ${kind} (${variant})`);
            if (chat && ingress) over.push(+(ingress.p50 - chat.p50).toFixed(2));
          }
          if (over.length > 0) process.stdout.write(`  ${String(rate).padStart(4)} rps  ${kind.padEnd(12)} ${variant.padEnd(38)} p50 ${showRounds(over)}\n`);
        }
      }
    }
    for (const against of peers) {
      process.stdout.write(
        against.compares === "stack"
          ? `\nThe stack's CPU per request against ${against.label}'s, same round (stack: every service, Postgres and Redis)\n`
          : `\nThe gateway process's CPU per request against the ${against.label}'s, same round\n`,
      );
      for (const r of rows) {
        const kind = r.scenario.startsWith("gateway stream") ? "stream TTFT" : r.scenario.startsWith("gateway non-stream") ? "non-stream" : null;
        const theirs = kind && rows.find((p) => p.round === r.round && p.rate === r.rate && p.scenario === peerScenario(kind, against));
        const peerMs = theirs ? theirs.cpuMsPerRequest[against.name] : undefined;
        const ours = against.compares === "stack" ? stackCpu(r.cpuMsPerRequest) : r.cpuMsPerRequest.gateway;
        if (!peerMs || ours === undefined) continue;
        process.stdout.write(`  ${label(r).padEnd(60)} ${against.compares} ${ours.toFixed(2)}  ${against.label} ${peerMs.toFixed(2)}  ${(ours / peerMs).toFixed(2)}×\n`);
      }
    }
    process.stdout.write(`\nGateway resident memory: ${rssBefore} MB at start, ${rssAfter} MB after the runs\n`);
    const damon = damonRunning.length === 0 ? "none" : damonPaused ? "paused" : damonRunning.join("; ");
    if (damonRunning.length > 0) {
      process.stdout.write(
        damonPaused
          ? `\nThe kernel's DAMON memory monitor (${damonRunning.join("; ")}) was paused for the runs (BENCH_PAUSE_DAMON=1).\n`
          : `\nThe kernel's DAMON memory monitor ran during the runs (${damon}): each sample stalls every process at once, which lands in every p99 above; BENCH_PAUSE_DAMON=1 pauses it (docs/performance.md).\n`,
      );
    }
    const dir = join(__dirname, "..", "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "overhead.json"),
      JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, rounds: ROUNDS, rows, added, rssBefore, rssAfter, damon }, null, 2),
    );
  } finally {
    for (const p of peers) await p.service.stop();
    await stack.stop();
    fake.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
