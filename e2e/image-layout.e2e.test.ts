import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  createTestDatabase,
  freePort,
  httpReady,
  newIdentityKeys,
  startNodeProcess,
  tcpReady,
  TEST_REDIS_URL,
  type ChildService,
  type TestDatabase,
} from "@router/testkit";
import { renderKustomization } from "./kubernetes/render";

/**
 * Starts every service the way the image does, without Docker: the repository is the image's /app
 * (root-owned, so the service user cannot write there), the command is the one in its Kubernetes
 * Deployment, the user is the Dockerfile's USER, and ROUTER_DATA_DIR and TMPDIR are the only
 * directories it owns, as the emptyDir volumes are in the pods.
 */
const root = join(__dirname, "..");
const dockerfile = readFileSync(join(root, "deploy", "Dockerfile"), "utf8");
const finalStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
const imageUser = /^USER (\d+):(\d+)$/m.exec(finalStage);
const imageDataDir = /^ENV ROUTER_DATA_DIR=(\S+)$/m.exec(finalStage)?.[1];

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: Array<{ command: string[]; securityContext: { runAsUser: number } }> } } };
}
const deployments = (renderKustomization(join(root, "deploy", "k8s", "base")) as unknown as Deployment[]).filter((o) => o.kind === "Deployment");
const container = (name: string) => {
  const c = deployments.find((d) => d.metadata.name === name)?.spec.template.spec.containers[0];
  if (!c) throw new Error(`no Deployment ${name} in deploy/k8s/base`);
  return c;
};

/** `node <flags> <script>` of the Deployment's command. */
function commandOf(name: string): { script: string; nodeArgs: string[] } {
  const [node, ...args] = container(name).command;
  expect(node).toBe("node");
  const script = args.pop() ?? "";
  return { script: join(root, script), nodeArgs: args };
}

/** True when every directory above `path` lets other users through, as /app does in the image. */
function reachableByOthers(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

const uid = Number(imageUser?.[1]);
const gid = Number(imageUser?.[2]);
// Switching user needs root, and a checkout (and node) the image's user can reach; elsewhere the
// services run as the current user, still with only the data directory and TMPDIR to write to.
const user =
  process.getuid?.() === 0 && reachableByOthers(join(root, "package.json")) && reachableByOthers(process.execPath) ? { uid, gid } : undefined;

let db: TestDatabase;
let dataDir: string;
const running: ChildService[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "router-image-"));
  // Root-owned and traversable, as /var/lib is in the image: only the directories below are writable.
  chmodSync(dataDir, 0o755);
});

afterAll(async () => {
  await Promise.all(running.filter((s) => s.name === "gateway").map((s) => s.stop()));
  await Promise.all(running.map((s) => s.stop()));
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A directory owned by the image's user, as a mounted emptyDir is (fsGroup). */
function ownedDir(path: string): string {
  mkdirSync(path, { recursive: true });
  if (user) chownSync(path, user.uid, user.gid);
  return path;
}

/** The effective uid of a running process, from /proc. */
const uidOf = (pid: number) => Number(/^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

describe("the image layout", () => {
  it("names a numeric non-root USER and ROUTER_DATA_DIR that the Deployments run as and mount", () => {
    expect(imageUser).not.toBeNull();
    expect(uid).toBeGreaterThan(0);
    expect(imageDataDir).toBe("/var/lib/router");
    for (const d of deployments) expect(d.spec.template.spec.containers[0]?.securityContext.runAsUser).toBe(uid);
    expect(readFileSync(join(root, ".dockerignore"), "utf8")).toMatch(/node_modules/);
  });

  it("starts every service as that user with only its data directory and /tmp writable", async () => {
    db = await createTestDatabase("image");
    const data = ownedDir(join(dataDir, "data"));
    const ports = {
      gateway: await freePort(),
      routingHttp: await freePort(),
      routingGrpc: await freePort(),
      ledgerGrpc: await freePort(),
      ledgerHttp: await freePort(),
      activity: await freePort(),
      reports: await freePort(),
      alerts: await freePort(),
      broadcast: await freePort(),
      runaway: await freePort(),
    };
    const env: Record<string, string> = {
      NODE_ENV: "production",
      ROUTER_DATA_DIR: data,
      TMPDIR: ownedDir(join(dataDir, "tmp")),
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      ROUTER_BUS: "redis",
      ROUTER_BUS_NAMESPACE: `image-${randomBytes(4).toString("hex")}`,
      ROUTER_KEY_PEPPER: randomBytes(32).toString("base64url"),
      ROUTER_INTERNAL_SECRET: randomBytes(32).toString("base64url"),
      ROUTER_MASTER_KEY: randomBytes(32).toString("base64url"),
      ...newIdentityKeys().env,
      LOG_LEVEL: "warn",
      PORT: String(ports.gateway),
      ROUTING_HTTP_PORT: String(ports.routingHttp),
      ROUTING_GRPC_PORT: String(ports.routingGrpc),
      LEDGER_GRPC_PORT: String(ports.ledgerGrpc),
      LEDGER_HTTP_PORT: String(ports.ledgerHttp),
      ACTIVITY_HTTP_PORT: String(ports.activity),
      REPORTS_HTTP_PORT: String(ports.reports),
      ALERTS_HTTP_PORT: String(ports.alerts),
      BROADCAST_HTTP_PORT: String(ports.broadcast),
      RUNAWAY_HTTP_PORT: String(ports.runaway),
      ROUTING_GRPC_ADDR: `dns:///localhost:${ports.routingGrpc}`,
      LEDGER_GRPC_ADDR: `dns:///localhost:${ports.ledgerGrpc}`,
      LEDGER_HTTP_URL: `http://127.0.0.1:${ports.ledgerHttp}`,
      ROUTING_HTTP_URL: `http://127.0.0.1:${ports.routingHttp}`,
      ACTIVITY_HTTP_URL: `http://127.0.0.1:${ports.activity}`,
      REPORTS_HTTP_URL: `http://127.0.0.1:${ports.reports}`,
      ALERTS_HTTP_URL: `http://127.0.0.1:${ports.alerts}`,
      BROADCAST_HTTP_URL: `http://127.0.0.1:${ports.broadcast}`,
      RUNAWAY_HTTP_URL: `http://127.0.0.1:${ports.runaway}`,
      GATEWAY_METRICS_PORT: "0",
      LEDGER_METRICS_PORT: "0",
    };
    const start = (name: string, ready: () => Promise<boolean>) => {
      const { script, nodeArgs } = commandOf(name);
      return startNodeProcess(name, script, env, ready, 30_000, nodeArgs, user);
    };
    const health = (port: number) => () => httpReady(`http://127.0.0.1:${port}/health`);
    // One at a time: each migrates its own schema on start, and the box is shared.
    running.push(await start("routing", health(ports.routingHttp)));
    running.push(await start("ledger", () => tcpReady(ports.ledgerGrpc)));
    running.push(await start("activity", health(ports.activity)));
    running.push(await start("reports", health(ports.reports)));
    running.push(await start("alerts", health(ports.alerts)));
    running.push(await start("broadcast", health(ports.broadcast)));
    running.push(await start("runaway", health(ports.runaway)));
    running.push(await start("gateway", async () => (await fetch(`http://127.0.0.1:${ports.gateway}/readyz`).catch(() => null))?.status === 200));

    // Serving, not just listening: the gateway answers the catalog through routing.
    const models = await fetch(`http://127.0.0.1:${ports.gateway}/v1/models`);
    expect(models.status).toBe(200);

    for (const s of running) {
      expect({ service: s.name, alive: s.child.exitCode === null }).toEqual({ service: s.name, alive: true });
      if (user) expect({ service: s.name, uid: uidOf(s.child.pid ?? 0) }).toEqual({ service: s.name, uid });
    }
    // What they wrote went to the data directory: each bus user's outbox, owned by the image's user.
    for (const name of ["gateway", "activity", "reports", "alerts", "broadcast", "runaway", "routing"]) {
      const outbox = join(data, "outbox", name);
      expect({ outbox: name, exists: existsSync(outbox) }).toEqual({ outbox: name, exists: true });
      if (user) expect(statSync(outbox).uid).toBe(uid);
    }
  }, 240_000);
});
