import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { freePort, httpReady, startNodeProcess, tcpReady, type ChildService } from "@router/testkit";
import type { LoadTarget } from "./load";

/**
 * A peer gateway measured beside `npm start` by `make bench-embedded`, and beside the stack by
 * `make bench` (BENCH_PEER=portkey, or passthrough for the floor): Portkey is installed
 * from npm into a cache directory outside the repository; each is started as a child process on a
 * free port with its defaults, in front of the same fake upstream, and checked to forward to it.
 */
export interface PeerGateway {
  /** As BENCH_PEER names it; also its process's name in the CPU figures. */
  name: string;
  /** Name and pinned version, as the rows print it. */
  label: string;
  /**
   * What of Router's a same-run ratio sets against this peer's CPU per request, as the issue's
   * targets do: a gateway like Portkey against the whole stack, the passthrough floor against the
   * gateway process.
   */
  compares: "stack" | "gateway";
  service: ChildService;
  /** The direct row's request (same body, same provider key) sent through the peer. */
  target: (stream: boolean) => LoadTarget;
}

const PORTKEY_VERSION = "1.15.2";
/**
 * Portkey's gateway with two of its dependencies pinned: from @hono/node-server 1.14.2 on, its
 * streaming answers fail ("TypeError: immutable": it adds headers to a Response built on the
 * upstream's, whose Headers those versions share; Portkey-AI/gateway#1389), and @hono/node-ws 1.3
 * asks for @hono/node-server 1.19.
 */
const PORTKEY_PACKAGES = [`@portkey-ai/gateway@${PORTKEY_VERSION}`, "@hono/node-server@1.14.1", "@hono/node-ws@1.2.0"];

const PEERS = new Map<string, (direct: (stream: boolean) => LoadTarget) => Promise<PeerGateway>>([
  ["portkey", startPortkey],
  ["passthrough", startPassthrough],
]);

/** `${XDG_CACHE_HOME:-~/.cache}/router-bench/<name>`, installed once with exactly `packages`; a later run reuses it while the pins are the same. */
function installOnce(name: string, packages: string[]): string {
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "router-bench", name);
  const marker = join(dir, "router-bench-installed.json");
  const wanted = JSON.stringify(packages);
  if (existsSync(marker) && readFileSync(marker, "utf8") === wanted) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.stdout.write(`Installing ${packages.join(" ")} into ${dir}\n`);
  // --ignore-scripts: Portkey's one install script is patch-package, and the package ships no patches.
  const npm = spawnSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev", ...packages], {
    cwd: dir,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (npm.status !== 0) {
    throw new Error(`BENCH_PEER: "npm install ${packages.join(" ")}" into ${dir} failed (${npm.error?.message ?? `exit ${String(npm.status)}`})`);
  }
  writeFileSync(marker, wanted);
  return dir;
}

async function startPortkey(direct: (stream: boolean) => LoadTarget): Promise<PeerGateway> {
  const dir = installOnce(`portkey@${PORTKEY_VERSION}`, PORTKEY_PACKAGES);
  const script = join(dir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js");
  if (!existsSync(script)) throw new Error(`BENCH_PEER=portkey: ${script} is missing after the install (remove ${dir} to install again)`);
  const port = await freePort();
  // As `npx @portkey-ai/gateway` runs it (no config: no cache, no retries, no Redis) but on a free port.
  const service = await startNodeProcess("portkey", [script, `--port=${port}`], {}, () => httpReady(`http://127.0.0.1:${port}/`), 30_000);
  const origin = `http://127.0.0.1:${port}`;
  return {
    name: "portkey",
    label: `portkey ${PORTKEY_VERSION}`,
    compares: "stack",
    service,
    target: (stream) => {
      const t = direct(stream);
      // The provider's key goes through as it is; the upstream is named per request.
      return { ...t, origin, headers: { ...t.headers, "x-portkey-provider": "openai", "x-portkey-custom-host": `${t.origin}/v1` } };
    },
  };
}

/** The floor: a bare Node pipe proxy (passthrough-proxy.ts) in front of the fake, the request unchanged. */
async function startPassthrough(direct: (stream: boolean) => LoadTarget): Promise<PeerGateway> {
  const port = await freePort();
  const script = join(__dirname, "passthrough-proxy.js");
  const service = await startNodeProcess("passthrough", [script, String(port), direct(false).origin], {}, () => tcpReady(port), 10_000);
  const origin = `http://127.0.0.1:${port}`;
  return { name: "passthrough", label: "passthrough floor", compares: "gateway", service, target: (stream) => ({ ...direct(stream), origin }) };
}

/** The completion text of a chat answer: the message's content, or a stream's content deltas joined. */
function answerText(body: string, stream: boolean): string {
  type Choice = { message?: { content?: string }; delta?: { content?: string } };
  const choiceOf = (json: string) => (JSON.parse(json) as { choices?: Choice[] }).choices?.[0];
  if (!stream) return choiceOf(body)?.message?.content ?? "";
  return body
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => choiceOf(line.slice("data: ".length))?.delta?.content ?? "")
    .join("");
}

async function send(t: LoadTarget): Promise<{ status: number; body: string }> {
  const res = await fetch(`${t.origin}${t.path}`, { method: t.method ?? "POST", headers: t.headers, body: t.body });
  return { status: res.status, body: await res.text() };
}

/** A non-stream and a stream request through the peer must bring back the fake upstream's own answer. */
async function checkForwards(peer: PeerGateway, direct: (stream: boolean) => LoadTarget): Promise<void> {
  for (const stream of [false, true]) {
    const kind = stream ? "a stream request" : "a non-stream request";
    const own = await send(direct(stream));
    const want = own.status === 200 ? answerText(own.body, stream) : "";
    if (want === "") throw new Error(`BENCH_PEER: ${kind} straight to the fake upstream answered status ${own.status}, body ${own.body.slice(0, 400)}`);
    const got = await send(peer.target(stream)).catch((err: unknown) => ({ status: 0, body: String(err instanceof Error && err.cause ? err.cause : err) }));
    let text = "";
    try {
      text = got.status === 200 ? answerText(got.body, stream) : "";
    } catch {
      // Not the OpenAI format: reported below with the body.
    }
    if (text !== want) {
      throw new Error(
        `BENCH_PEER: ${kind} through ${peer.label} did not come back with the fake upstream's answer ("${want}"): ` +
          `${got.status === 0 ? "no answer" : `status ${got.status}`}, body ${got.body.slice(0, 400)}\n${peer.label}'s output:\n${peer.service.output().slice(-2000)}`,
      );
    }
  }
}

/** Installs (once), starts and checks the peer named by BENCH_PEER; `direct` is the direct row's request. */
export async function startPeer(name: string, direct: (stream: boolean) => LoadTarget): Promise<PeerGateway> {
  const start = PEERS.get(name);
  if (!start) throw new Error(`BENCH_PEER: no peer "${name}" (known: ${[...PEERS.keys()].join(", ")})`);
  const peer = await start(direct);
  try {
    await checkForwards(peer, direct);
  } catch (err) {
    await peer.service.stop();
    throw err;
  }
  return peer;
}
