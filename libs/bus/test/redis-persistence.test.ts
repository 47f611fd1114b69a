import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import Redis from "ioredis";
import { createLogger } from "@router/logging";
import { TEST_REDIS_URL } from "@router/testkit";
import { createBus } from "../src";

/** A logger whose lines a test can read back. */
function capturingLog() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: "info", destination }), lines, named: (msg: string) => lines.filter((l) => l.msg === msg) };
}

/** The Redis bus checks at start that Redis keeps events across a restart (AOF). */
describe("redis bus persistence check", () => {
  const admin = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  const dirs: string[] = [];
  const user = `router-test-noconfig-${randomBytes(4).toString("hex")}`;
  const password = randomBytes(12).toString("hex");

  afterAll(async () => {
    await admin.call("ACL", "DELUSER", user).catch(() => undefined);
    admin.disconnect();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const open = async (redisUrl: string) => {
    const capture = capturingLog();
    const outboxDir = await mkdtemp(path.join(os.tmpdir(), "bus-redis-persist-"));
    dirs.push(outboxDir);
    const bus = await createBus({ kind: "redis", clientId: "persistence-test", redisUrl, log: capture.log, outboxDir, closeTimeoutMs: 1_000 });
    await bus.close();
    return capture;
  };

  it("warns when Redis runs without AOF, naming the fix (and stays quiet with it)", async () => {
    const [, appendonly] = (await admin.config("GET", "appendonly")) as string[];
    const { named } = await open(TEST_REDIS_URL);
    if (appendonly === "yes") {
      expect(named("bus.redis.not_persistent")).toEqual([]);
    } else {
      const [warning] = named("bus.redis.not_persistent");
      expect(warning).toMatchObject({ level: "warn", appendonly, fix: expect.stringContaining("appendonly yes") });
    }
    expect(named("bus.redis.persistence_unchecked")).toEqual([]);
  });

  it("says it could not check, rather than warning, when Redis refuses CONFIG (managed Redis, ACLs)", async () => {
    // A real Redis user without the CONFIG command, as managed services hand out.
    await admin.call("ACL", "SETUSER", user, "on", `>${password}`, "~*", "&*", "+@all", "-config");
    const url = new URL(TEST_REDIS_URL);
    url.username = user;
    url.password = password;
    const { named } = await open(url.toString());
    expect(named("bus.redis.not_persistent")).toEqual([]);
    const [line] = named("bus.redis.persistence_unchecked");
    expect(line).toMatchObject({ level: "info", need: "appendonly yes", reason: expect.stringMatching(/NOPERM|config/i) });
    expect(JSON.stringify(line)).not.toContain(password);
  });
});
