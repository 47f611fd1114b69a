import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  gatewayClient,
  httpReady,
  startFakeOpenAi,
  startHttpsReceiver,
  startNodeProcess,
  waitFor,
  type ChildService,
  type FakeUpstream,
  type HttpsReceiver,
} from "@router/testkit";
import { callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { health } from "@router/proto";
import { describeRun, runClaude } from "./claude-code-cli";

const MAIN = join(__dirname, "..", "services", "embedded", "dist", "main.js");
const CLI = join(__dirname, "..", "services", "cli", "dist", "main.js");
const run = promisify(execFile);
const KEY_LINE = /^\s+(rt-mgmt-\S+)\s*$/m;

/**
 * `npm start`: every service in one process on embedded defaults (PGlite, in-memory caches, the
 * in-process bus), creating an operator organisation on first start and printing its key once.
 */
describe("the one-process default (npm start)", () => {
  let fake: FakeUpstream;
  let receiver: HttpsReceiver;
  let dataDir: string;
  let port: number;
  let proc: ChildService | null = null;
  let managementKey = "";

  const settings = () => ({
    PORT: String(port),
    ROUTER_DATA_DIR: dataDir,
    ROUTER_PROVIDER_OPENAI_BASE_URL: fake.url,
    LOG_LEVEL: "warn",
    METRICS_PORT: "0",
    // Test only: broadcast may deliver to the loopback receiver and trust its certificate.
    ROUTER_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
    ROUTER_OUTBOUND_CA_FILE: receiver.caFile,
  });
  const start = async () => startNodeProcess("router", MAIN, settings(), () => httpReady(`http://127.0.0.1:${port}/health`), 60_000);

  /**
   * Runs `npm start` in a process group of its own, as a terminal does, where Ctrl-C signals the
   * whole group (npm and node, which npm also forwards it to); resolves once it serves. The build is
   * current (the suite runs after one), so it starts at once.
   */
  const startUnderNpm = async () => {
    const group = spawn("npm", ["start"], {
      cwd: join(__dirname, ".."),
      // Consumers let events gather for 1.5 s before writing them, as a busy process lags behind: what
      // the last streams published is still waiting when the gateway has stopped.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...settings(), ROUTER_BUS_BATCH_WAIT_MS: "1500" },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    group.stdout.on("data", (d: Buffer) => (out += d.toString()));
    group.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => group.once("exit", () => resolve()));
    // Longer when a source changed since the last build: `npm start` builds it first.
    await waitFor(() => httpReady(`http://127.0.0.1:${port}/health`), { timeoutMs: 120_000, what: "npm start to serve" });
    return { group, output: () => out, exited };
  };

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    receiver = await startHttpsReceiver();
    dataDir = mkdtempSync(join(tmpdir(), "router-embedded-"));
    port = await freePort();
  });

  afterAll(async () => {
    await proc?.stop();
    await fake.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts with no settings, prints the operator key once, serves a completion and records it", async () => {
    proc = await start();
    // The new data directory was created by a child process: the server never held initdb's WASM
    // memory (a start that created it in process kept about 860 MB resident; this one about 470).
    const status = readFileSync(`/proc/${proc.child.pid}/status`, "utf8");
    const residentMb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
    expect(residentMb).toBeLessThan(640);
    const key = await waitFor(() => KEY_LINE.exec(proc?.output() ?? "")?.[1], { what: "the printed management key" });
    managementKey = key;
    const base = `http://127.0.0.1:${port}`;
    // Beside the key, where to use it; the gateway's own address leads there too.
    expect(proc.output()).toContain(`${key}\n\nSign in to the dashboard with it: ${base}/signin\n`);
    const root = await fetch(`${base}/`, { redirect: "manual" });
    expect({ status: root.status, location: root.headers.get("location") }).toEqual({ status: 302, location: "/signin" });
    const signedIn = await fetch(`${base}/`, { redirect: "manual", headers: { cookie: "rt_session=any" } });
    expect(signedIn.headers.get("location")).toBe("/workspace");
    const health = (await (await fetch(`${base}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", rate_limiting: { store: "memory", shared: false } });
    expect(typeof health.version).toBe("string");

    const mgmt = gatewayClient(base, key);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-embedded-0001" })).status).toBe(201);
    // The alerts service runs in the same process, behind the same gateway.
    expect((await mgmt.post("/v1/alerts/channels", { kind: "chat", target: "https://hooks.slack.com/services/T0/B0/embedded" })).status).toBe(201);
    // A soft ceiling that counts BYOK spend: the request takes a hold, which the ledger settles.
    const created = (await mgmt.post("/v1/keys", { name: "local", limit: 10, limit_mode: "soft", include_byok_in_limit: true })).json.data;
    const inference = gatewayClient(base, created.key as string);
    expect((await mgmt.post("/v1/broadcast/destinations", { kind: "webhook", url: `${receiver.url}/hook` })).status).toBe(201);
    fake.script({ text: "Embedded hello." });
    const res = await inference.post("/v1/chat/completions", {
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe("Embedded hello.");
    await waitFor(async () => {
      const rows = (await mgmt.get("/v1/activity")).json.data as Array<{ id: string }> | undefined;
      return rows?.some((r) => r.id === res.json.id);
    }, { what: "the activity row" });

    // The ledger settles the hold from the request's record on the in-process bus, as deployed.
    const row = (await mgmt.get(`/v1/activity/requests/${res.json.id}`)).json.data as { usage_lines?: Array<{ cost_nanodollars: string }> };
    const cost = Number((row.usage_lines ?? []).reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n)) / 1e9;
    expect(cost).toBeGreaterThan(0);
    await waitFor(async () => {
      const usage = (await inference.get("/v1/key")).json.data?.usage as number | undefined;
      return usage !== undefined && Math.abs(usage - cost) < 1e-9;
    }, { what: "the key's usage to be the settled cost" });

    // Embedded PGlite offers no cursor: the export pages through the month by keyset instead.
    const csv = await fetch(`${base}/v1/activity/export`, { headers: { authorization: `Bearer ${key}` } });
    expect(csv.status).toBe(200);
    const lines = (await csv.text()).trim().split("\n");
    expect(lines[0]).toMatch(/^created_at,request_id,client,key,/);
    expect(lines.slice(1).map((l) => l.split(",")[1])).toEqual([res.json.id]);
    const summary = await mgmt.get("/v1/activity/summary?days=2");
    expect(summary.json.data.current.requests).toBe(1);
    // The reports service counts it too, in the same process on the in-process bus.
    const workspace = ((await mgmt.get("/v1/workspaces")).json.data as Array<{ id: string }>)[0]?.id ?? "";
    await waitFor(async () => (await mgmt.get(`/v1/reports/workspaces/${workspace}`)).json.data?.totals?.requests === 1, {
      what: "the request in the workspace's report",
    });
    const delivered = await waitFor(() => receiver.requests.find((r) => r.path === "/hook"), { what: "the broadcast webhook" });
    expect(JSON.parse(delivered.body)).toMatchObject({ type: "request.completed", request: { id: res.json.id } });
  }, 90_000);

  it("counts a completion on the key the README's first example creates: its limit applies to BYOK traffic", async () => {
    const readme = readFileSync(join(__dirname, "..", "README.md"), "utf8");
    const example = readme.slice(readme.indexOf("## A first completion"));
    const keysCall = example.slice(example.indexOf("localhost:8080/v1/keys"));
    const body = JSON.parse(/-d '(\{[^']*\})'/.exec(keysCall)?.[1] ?? "null") as Record<string, unknown>;
    expect(body).toMatchObject({ limit: expect.any(Number) });

    const key = KEY_LINE.exec(proc?.output() ?? "")?.[1] ?? "";
    const base = `http://127.0.0.1:${port}`;
    const created = (await gatewayClient(base, key).post("/v1/keys", body)).json.data as { key: string };
    const inference = gatewayClient(base, created.key);
    fake.script({ text: "README hello." });
    const res = await inference.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hello" }] });
    expect(res.status).toBe(200);
    const info = await waitFor(
      async () => {
        const data = (await inference.get("/v1/key")).json.data as { usage: number; limit: number; limit_remaining: number };
        return data.usage > 0 ? data : undefined;
      },
      { what: "the completion's cost on the README key's limit" },
    );
    expect(info.limit).toBe(body.limit);
    expect(info.limit_remaining).toBeCloseTo(info.limit - info.usage, 9);

    // MCP: the console of this process serves it, and its tool calls this gateway back as the caller.
    const mcp = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${created.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_key_usage", arguments: {} } }),
    });
    expect(mcp.status).toBe(200);
    const tool = ((await mcp.json()) as { result: { isError: boolean; content: Array<{ text: string }> } }).result;
    expect(tool.isError).toBe(false);
    expect(JSON.parse(tool.content[0]?.text ?? "{}")).toMatchObject({ data: { limit: body.limit, usage: info.usage } });
  }, 60_000);

  it("calls routing and the ledger in process: no port of the process answers gRPC", async () => {
    const pid = proc?.child.pid ?? 0;
    const ports = listeningPorts(pid);
    // The gateway's own port is among them: the scan sees what the process listens on.
    expect(ports).toContain(port);
    const answering: number[] = [];
    for (const p of ports) {
      const client = new health.HealthClient(`127.0.0.1:${p}`, insecure(), CLIENT_OPTIONS);
      const served = await callUnary(client, client.check.bind(client), { service: "" }, { deadlineMs: 1_000, service: "probe" }).then(
        () => true,
        () => false,
      );
      client.close();
      if (served) answering.push(p);
    }
    expect(answering).toEqual([]);
  }, 60_000);

  it("serves Claude Code with its own defaults, pointed at it with a Router key", async () => {
    const key = KEY_LINE.exec(proc?.output() ?? "")?.[1] ?? "";
    const base = `http://127.0.0.1:${port}`;
    const created = (await gatewayClient(base, key).post("/v1/keys", { name: "claude-code" })).json.data as { key: string };
    fake.setDefault({ text: "Embedded Claude." });
    const work = mkdtempSync(join(tmpdir(), "claude-work-"));
    try {
      const run = await runClaude(base, created.key, "Say hello", { model: "openai/gpt-4o-mini", cwd: work });
      expect({ run: describeRun(run), result: run.result?.result }).toEqual({ run: expect.any(String), result: "Embedded Claude." });
    } finally {
      fake.setDefault({});
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);

  it("refuses a bad setting in one line that names it, with no stack trace", async () => {
    const failed = await run(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? "", PORT: "eighty", ROUTER_DATA_DIR: dataDir } }).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/^router failed to start: invalid configuration:\n {2}PORT: /);
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses a port in use in one line naming its setting, before it creates a data directory", async () => {
    const newDir = join(tmpdir(), `router-embedded-unused-${process.pid}`);
    const startOn = (extra: Record<string, string>) =>
      run(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? "", ROUTER_DATA_DIR: newDir, METRICS_PORT: "0", ...extra } }).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
    // The server of the first test holds PORT.
    const onPort = await startOn({ PORT: String(port) });
    expect(onPort?.code).toBe(1);
    expect(onPort?.stderr).toMatch(new RegExp(`^router failed to start: PORT=${port}: 127\\.0\\.0\\.1:${port} is in use .*METRICS_PORT.*\\n$`));
    expect(existsSync(newDir)).toBe(false);

    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const metricsPort = (taken.address() as { port: number }).port;
    try {
      const onMetrics = await startOn({ PORT: String(await freePort()), METRICS_PORT: String(metricsPort) });
      expect(onMetrics?.code).toBe(1);
      expect(onMetrics?.stderr).toMatch(new RegExp(`^router failed to start: METRICS_PORT=${metricsPort}: .* is in use .*\\n$`));
      expect(existsSync(newDir)).toBe(false);
    } finally {
      taken.close();
    }
  });

  it("keeps its state across a restart and does not print a new key", async () => {
    const firstOutput = proc?.output() ?? "";
    const key = KEY_LINE.exec(firstOutput)?.[1] ?? "";
    await proc?.stop();
    proc = await start();
    expect(KEY_LINE.test(proc.output())).toBe(false);
    const keys = await gatewayClient(`http://127.0.0.1:${port}`, key).get("/v1/keys");
    expect(keys.status).toBe(200);
    expect((keys.json.data as Array<{ name: string }>).map((k) => k.name)).toContain("local");
    const channels = await gatewayClient(`http://127.0.0.1:${port}`, key).get("/v1/alerts/channels");
    expect(channels.json).toMatchObject({ data: [{ kind: "chat", target: "https://hooks.slack.com/services/T0/B0/embedded" }], email_available: false });
  }, 90_000);

  it("on Ctrl-C of its terminal finishes its streams and records and settles every one before it exits", async () => {
    await proc?.stop();
    proc = null;
    const underNpm = await startUnderNpm();
    const base = `http://127.0.0.1:${port}`;
    const mgmt = gatewayClient(base, managementKey);
    const created = (await mgmt.post("/v1/keys", { name: "ctrl-c", limit: 10, limit_mode: "soft", include_byok_in_limit: true })).json.data;
    const client = gatewayClient(base, created.key as string);
    const n = 6;
    const words = Array.from({ length: 10 }, (_v, i) => `w${i} `);
    fake.script(...Array.from({ length: n }, () => ({ chunks: words, chunkDelayMs: 150, usage: { prompt: 500, completion: 10 } })));
    const before = fake.requests.length;
    const streams = Array.from({ length: n }, () => client.stream({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Count slowly" }] }));
    await waitFor(() => fake.requests.length >= before + n, { what: "every stream dispatched" });
    process.kill(-(underNpm.group.pid ?? 0), "SIGINT");
    const done = await Promise.all(streams);
    for (const s of done) {
      expect(s.status).toBe(200);
      expect(s.done).toBe(true);
      expect(s.chunks.some((c) => c.error)).toBe(false);
    }
    // npm goes at once; node finishes its ordered shutdown, then lets the data directory go: a
    // restart succeeds only then. Every step finished in time (a late one logs a warning).
    proc = await waitFor(() => start().catch(() => undefined), { timeoutMs: 90_000, what: "a restart on the released data directory" });
    expect(underNpm.output()).not.toMatch(/stop_step_timed_out|stop_step_failed|bus_not_drained/);

    // The in-process bus keeps nothing across a restart: what was not written before the exit is lost.
    const ids = done.map((s) => s.chunks[0]?.id as string);
    const rows = await Promise.all(ids.map(async (id) => (await mgmt.get(`/v1/activity/requests/${id}`)).json.data as Record<string, any> | undefined));
    expect(rows.filter((r) => r?.status === "complete").length).toBe(n);
    const recorded = rows
      .flatMap((r) => (r?.usage_lines ?? []) as Array<{ cost_nanodollars: string }>)
      .reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n);
    const usage = (await client.get("/v1/key")).json.data?.usage as number;
    expect(recorded).toBeGreaterThan(0n);
    expect(usage).toBeCloseTo(Number(recorded) / 1e9, 9);
  }, 180_000);

  it("on Ctrl-C says what it waits for, counting down; a second Ctrl-C stops at once and still records and settles every stream", async () => {
    await proc?.stop();
    proc = null;
    const underNpm = await startUnderNpm();
    const base = `http://127.0.0.1:${port}`;
    const mgmt = gatewayClient(base, managementKey);
    const created = (await mgmt.post("/v1/keys", { name: "ctrl-c-twice", limit: 10, limit_mode: "soft", include_byok_in_limit: true })).json.data;
    const client = gatewayClient(base, created.key as string);
    const n = 3;
    // Streams far longer than the gateway's 20 s grace: only the second Ctrl-C ends them early.
    const words = Array.from({ length: 400 }, (_v, i) => `w${i} `);
    fake.script(...Array.from({ length: n }, () => ({ chunks: words, chunkDelayMs: 100, usage: { prompt: 500, completion: 400 } })));
    const before = fake.requests.length;
    const streams = Array.from({ length: n }, () => client.stream({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Count for a long time" }] }));
    await waitFor(() => fake.requests.length >= before + n, { what: "every stream dispatched" });
    process.kill(-(underNpm.group.pid ?? 0), "SIGINT");

    const secondsLeft = () => [...underNpm.output().matchAll(/^waiting for 3 streams to finish, (\d+) s left; Ctrl-C again to stop now$/gm)].map((m) => Number(m[1]));
    await waitFor(() => secondsLeft().length >= 2, { what: "the countdown, twice" });
    const counted = secondsLeft();
    expect(counted[0]).toBeLessThanOrEqual(20);
    expect(counted[1]).toBeLessThan(counted[0] ?? 0);
    const secondAt = Date.now();
    process.kill(-(underNpm.group.pid ?? 0), "SIGINT");
    const done = await Promise.all(streams);
    await underNpm.exited;
    // At once: the streams are cut, what they published is written, the store is closed.
    expect(Date.now() - secondAt).toBeLessThan(8_000);
    expect(underNpm.output()).toMatch(/router\.embedded\.stop_hurried/);
    expect(underNpm.output()).not.toMatch(/stop_forced|stop_step_timed_out|stop_step_failed|bus_not_drained/);
    for (const s of done) {
      expect(s.done).toBe(true);
      expect(s.chunks.at(-1)?.error).toMatchObject({ code: "router.gateway_shutdown" });
    }

    // Nothing lost: each cut stream is recorded and settled before the process went.
    proc = await waitFor(() => start().catch(() => undefined), { timeoutMs: 90_000, what: "a restart on the released data directory" });
    const ids = done.map((s) => s.chunks[0]?.id as string);
    const rows = await Promise.all(ids.map(async (id) => (await mgmt.get(`/v1/activity/requests/${id}`)).json.data as Record<string, any> | undefined));
    for (const r of rows) expect(r).toMatchObject({ status: "error", error_code: "router.gateway_shutdown" });
    const recorded = rows
      .flatMap((r) => (r?.usage_lines ?? []) as Array<{ cost_nanodollars: string }>)
      .reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n);
    expect(recorded).toBeGreaterThan(0n);
    expect((await client.get("/v1/key")).json.data?.usage as number).toBeCloseTo(Number(recorded) / 1e9, 9);
  }, 180_000);

  it("owns its data directory: a CLI command or a second server on it is refused and prints no key", async () => {
    const env = { PATH: process.env.PATH ?? "", ROUTER_DATA_DIR: dataDir, LOG_LEVEL: "silent" };
    const cli = run(process.execPath, [CLI, "org", "create", "--name", "Sneaky"], { env });
    await expect(cli).rejects.toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/in use by process \d+/) });

    const otherPort = await freePort();
    const second = startNodeProcess(
      "router-second",
      MAIN,
      { PORT: String(otherPort), ROUTER_DATA_DIR: dataDir, LOG_LEVEL: "warn", METRICS_PORT: "0" },
      () => httpReady(`http://127.0.0.1:${otherPort}/health`),
      15_000,
    );
    await expect(second).rejects.toThrow(/in use by process/);
  }, 60_000);

  it("lets an operator who lost the key list organisations and mint a new management key, once the server is stopped", async () => {
    await proc?.stop();
    proc = null;
    const env = { PATH: process.env.PATH ?? "", ROUTER_DATA_DIR: dataDir, LOG_LEVEL: "silent" };
    const listed = (await run(process.execPath, [CLI, "org", "list"], { env })).stdout.trim().split("\n").map((l) => JSON.parse(l));
    const operator = listed.find((o) => o.operator === true);
    expect(operator).toMatchObject({ org_id: expect.stringMatching(/^org_/), name: "Operator", active_management_keys: 1 });
    expect(JSON.stringify(listed)).not.toMatch(/rt-mgmt-/);

    const minted = JSON.parse((await run(process.execPath, [CLI, "key", "create", "--org", operator.org_id], { env })).stdout.trim());
    expect(minted.management_key).toMatch(/^rt-mgmt-/);
    await expect(run(process.execPath, [CLI, "key", "create", "--org", "org_nope"], { env })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--org"),
    });

    proc = await start();
    const keys = await gatewayClient(`http://127.0.0.1:${port}`, minted.management_key as string).get("/v1/keys");
    expect(keys.status).toBe(200);
    expect((keys.json.data as Array<{ name: string }>).map((k) => k.name)).toContain("recovery management key");
  }, 90_000);
});

/** The TCP ports process `pid` listens on: its sockets (/proc/<pid>/fd) that /proc/net/tcp{,6} lists as LISTEN. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket?.[1]) inodes.add(socket[1]);
    } catch {
      // Closed between the listing and the read.
    }
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, the inode is the tenth field.
      const [, local, , state] = fields;
      if (state === "0A" && local && inodes.has(fields[9] ?? "")) ports.add(parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
