import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient, startFakeAnthropic, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * Codex CLI, the real CLI from npm (`@openai/codex`, pinned; a native binary in the package), with
 * its own defaults and only a provider block pointing at Router (`wire_api = "responses"`), against
 * the gateway and fake upstreams. Its default request carries a `namespace` tool group and the
 * built-in `web_search`: the group reaches the provider as flat function tools, `web_search` is
 * dropped and named. Nothing leaves the machine: analytics and the update check are switched off
 * by its documented settings and every provider is a fake on loopback.
 */

const CODEX = require.resolve("@openai/codex/bin/codex.js");

/** What Codex sends, recorded (services/gateway/test/ingress/fixtures), for the plain requests that check what Codex cannot show. */
const CODEX_REQUEST = JSON.parse(
  readFileSync(join(__dirname, "../services/gateway/test/ingress/fixtures/codex-cli-0.171.0-request.json"), "utf8"),
) as { body: Record<string, unknown> };

interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCodex(gatewayUrl: string, key: string, model: string, prompt: string, opts: { cwd: string; args?: string[] }): Promise<CodexRun> {
  const home = mkdtempSync(join(tmpdir(), "codex-home-"));
  writeFileSync(
    join(home, "config.toml"),
    [
      `model = "${model}"`,
      `model_provider = "router"`,
      // Codex's documented switches for what would otherwise try the internet.
      `check_for_update_on_startup = false`,
      ``,
      `[analytics]`,
      `enabled = false`,
      ``,
      `[model_providers.router]`,
      `name = "Router"`,
      `base_url = "${gatewayUrl}/v1"`,
      `env_key = "ROUTER_KEY"`,
      `wire_api = "responses"`,
      ``,
    ].join("\n"),
  );
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, ROUTER_KEY: key };
  const args = [CODEX, "exec", "--skip-git-repo-check", ...(opts.args ?? []), prompt];
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { env, cwd: opts.cwd, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      rmSync(home, { recursive: true, force: true });
      resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr });
    });
    // Codex reads a prompt's continuation from stdin when it is not a terminal.
    child.stdin?.end();
  });
}

const describeRun = (run: CodexRun) => `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(-3000)}`;

interface ChatBody {
  stream?: boolean;
  tools?: Array<{ type: string; function: { name: string } }>;
  messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
}
interface AnthropicBody {
  tools?: Array<{ name: string; type?: string }>;
  messages: Array<{ role: string; content: unknown }>;
}

describe("Codex CLI through Router with its own defaults and only a provider block", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  let key: string;
  let mgmt: ReturnType<typeof gatewayClient>;
  let work: string;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
    stack = await startStack({ providerBaseUrls: { openai: openai.url, anthropic: anthropic.url } });
    const org = await stack.createOrg("Codex Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const provider of ["openai", "anthropic"]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: `sk-${provider}-codex-0001` })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "codex" });
    expect(created.status).toBe(201);
    key = created.json.data.key as string;
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  beforeEach(() => {
    openai.reset();
    anthropic.reset();
    work = mkdtempSync(join(tmpdir(), "codex-work-"));
  });

  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it("answers a turn on an OpenAI-compatible endpoint: the namespace group reaches it as flat function tools, web_search does not", async () => {
    openai.setDefault({ text: "Hello from Router's fake upstream." });
    const run = await runCodex(stack.gatewayUrl, key, "openai/gpt-4o-mini", "Say hello", { cwd: work });
    expect({ code: run.code, answered: run.stdout.includes("Hello from Router's fake upstream.") }).toEqual({ code: 0, answered: true });

    const calls = openai.requests.filter((r) => r.path === "/v1/chat/completions");
    expect(calls).toHaveLength(1);
    const body = calls[0]!.body as ChatBody;
    expect(body.stream).toBe(true);
    const names = (body.tools ?? []).map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(["exec_command", "multi_agent_v1__spawn_agent", "multi_agent_v1__wait_agent"]));
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    expect((body.tools ?? []).every((t) => t.type === "function")).toBe(true);
    expect(JSON.stringify(body.tools)).not.toContain("web_search");
  }, 120_000);

  it("records web_search as dropped on the generation record, and names it in x-router-dropped-tools", async () => {
    openai.setDefault({ text: "Dropped." });
    // Codex shows no response headers: the same request, sent plainly, does.
    const res = await fetch(`${stack.gatewayUrl}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...CODEX_REQUEST.body, model: "openai/gpt-4o-mini" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-dropped-tools")).toBe("web_search");
    const text = await res.text();
    const completed = text.split("\n").find((l) => l.startsWith("data: ") && l.includes('"response.completed"'));
    const id = (JSON.parse(completed!.slice(6)) as { response: { id: string } }).response.id;

    const inference = gatewayClient(stack.gatewayUrl, key);
    const generation = await waitFor(async () => {
      const g = await inference.get(`/v1/generation?id=${id}`);
      return g.status === 200 ? (g.json.data as { dropped_tools: string[] }) : null;
    }, { what: "the generation record" });
    expect(generation.dropped_tools).toEqual(["web_search"]);
    const detail = await waitFor(async () => {
      const d = await mgmt.get(`/v1/activity/requests/${id}`);
      return d.status === 200 ? (d.json.data as { dropped_tools: string[]; ingress: string }) : null;
    }, { what: "the request in activity" });
    expect(detail).toMatchObject({ dropped_tools: ["web_search"], ingress: "responses" });

    // A whole answer names what its serving endpoint dropped.
    const whole = await fetch(`${stack.gatewayUrl}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...CODEX_REQUEST.body, model: "openai/gpt-4o-mini", stream: false }),
    });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("x-router-dropped-tools")).toBe("web_search");
  }, 60_000);

  it("refuses the request under provider.require_parameters, naming web_search", async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...CODEX_REQUEST.body, model: "openai/gpt-4o-mini", stream: false, provider: { require_parameters: true } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("web_search");
    expect(openai.requests).toHaveLength(0);
  });

  it.each([
    ["an OpenAI-compatible endpoint", "openai/gpt-4o-mini"],
    ["an Anthropic endpoint (cross-family)", "anthropic/claude-sonnet-4"],
  ])("runs a shell tool loop on %s: the command runs, its output goes back, the answer is printed", async (_, model) => {
    const fake = model.startsWith("openai/") ? openai : anthropic;
    fake.script({ toolCalls: [{ id: "call_shell_1", name: "exec_command", arguments: { cmd: "echo hi > out.txt" } }] });
    fake.script({ text: "I wrote hi to out.txt." });
    const run = await runCodex(stack.gatewayUrl, key, model, "Write hi to out.txt", { cwd: work, args: ["--sandbox", "workspace-write"] });
    if (run.code !== 0 || !run.stdout.includes("I wrote hi to out.txt.")) throw new Error(describeRun(run));

    expect(existsSync(join(work, "out.txt")) && readFileSync(join(work, "out.txt"), "utf8")).toBe("hi\n");
    const calls = fake.requests.filter((r) => r.method === "POST");
    expect(calls).toHaveLength(2);
    // The second request carries the call and the command's result.
    const second = JSON.stringify(calls[1]!.body);
    expect(second).toContain("call_shell_1");
    expect(second).toContain("echo hi > out.txt");
    expect(second).toMatch(/exited with code 0/);
    if (fake === anthropic) {
      const body = calls[0]!.body as AnthropicBody;
      expect((body.tools ?? []).map((t) => t.name)).toEqual(expect.arrayContaining(["exec_command", "multi_agent_v1__spawn_agent"]));
      expect(JSON.stringify(body.tools)).not.toContain("web_search");
    } else {
      const body = calls[1]!.body as ChatBody;
      expect(body.messages.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_shell_1" });
    }
  }, 120_000);
});
