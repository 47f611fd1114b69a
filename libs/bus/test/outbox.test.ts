import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@router/logging";
import { waitFor } from "@router/testkit";
import { envelopeOf, type Envelope } from "../src/envelope";
import { Outbox, type OutboxOptions } from "../src/outbox";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

class Unreachable extends Error {}

/** A broker stand-in: records what it took; `up` decides whether it answers. */
class FakeBroker {
  up = true;
  refuse = new Set<string>();
  /** Events whose send throws a TypeError, as a bug in a client would. */
  bug = new Set<string>();
  attempts = 0;
  readonly sent: string[] = [];
  async send(e: Envelope): Promise<void> {
    this.attempts += 1;
    if (this.bug.has(e.id)) throw new TypeError("Cannot read properties of undefined (reading 'leader')");
    if (!this.up) throw new Unreachable("broker away");
    if (this.refuse.has(e.id)) throw new Error("message too large");
    this.sent.push(e.id);
  }
}

const event = (id: string) => envelopeOf({ topic: "t", key: "k", type: "router.test.v1", id, payload: Buffer.from(id) });
const line = (id: string) =>
  JSON.stringify({ id, topic: "t", key: "k", type: "router.test.v1", headers: {}, payload: Buffer.from(id).toString("base64") });

describe("outbox", () => {
  let dir: string;
  let open: Outbox[] = [];
  let broken: unknown[] = [];

  const openOutbox = async (broker: FakeBroker, overrides: Partial<OutboxOptions> = {}) => {
    const outbox = await Outbox.open({
      dir,
      log,
      retryMs: 20,
      timeoutMs: 1_000,
      send: (e) => broker.send(e),
      failureOf: (err) => (err instanceof Unreachable ? "unreachable" : err instanceof TypeError ? "broken" : "refused"),
      onBroken: (err) => void broken.push(err),
      ...overrides,
    });
    open.push(outbox);
    return outbox;
  };

  beforeEach(async () => {
    broken = [];
    dir = await mkdtemp(path.join(os.tmpdir(), "outbox-test-"));
  });
  afterEach(async () => {
    for (const outbox of open) await outbox.close();
    open = [];
    await rm(dir, { recursive: true, force: true });
  });

  it("sends directly while the broker answers and nothing waits", async () => {
    const broker = new FakeBroker();
    const outbox = await openOutbox(broker);

    await outbox.publish(event("a"));

    expect(broker.sent).toEqual(["a"]);
    expect(outbox.hasPending()).toBe(false);
  });

  it("keeps events while the broker is away and sends them in order once it is back", async () => {
    const broker = new FakeBroker();
    broker.up = false;
    const outbox = await openOutbox(broker);

    for (const id of ["a", "b", "c"]) await outbox.publish(event(id));
    expect(outbox.hasPending()).toBe(true);
    broker.up = true;
    await outbox.publish(event("d")); // queues behind the kept ones, though the broker answers again

    await waitFor(() => broker.sent.length === 4 && !outbox.hasPending(), { what: "the outbox to drain" });
    expect(broker.sent).toEqual(["a", "b", "c", "d"]);
    // The last event counts as sent before its segment file is removed: wait for the removal.
    const segmentsLeft = async () => (await readdir(dir)).filter((f) => f.endsWith(".log"));
    await waitFor(async () => (await segmentsLeft()).length === 0, { what: "the sent segments to be removed", timeoutMs: 5_000 });
    expect(await segmentsLeft()).toEqual([]);
  });

  it("still has its events after the process restarts", async () => {
    const broker = new FakeBroker();
    broker.up = false;
    const first = await openOutbox(broker);
    for (const id of ["a", "b"]) await first.publish(event(id));
    await first.close();
    open = [];

    broker.up = true;
    await openOutbox(broker);

    await waitFor(() => broker.sent.length === 2, { what: "the kept events" });
    expect(broker.sent).toEqual(["a", "b"]);
  });

  it("cuts off a line torn by a crash mid-append, which was never acknowledged", async () => {
    await writeFile(path.join(dir, "active.log"), `${line("whole")}\n${line("torn").slice(0, 20)}`);
    const broker = new FakeBroker();
    broker.up = false;
    const outbox = await openOutbox(broker);
    await outbox.publish(event("next"));

    broker.up = true;

    await waitFor(() => broker.sent.length === 2, { what: "the intact events" });
    expect(broker.sent).toEqual(["whole", "next"]);
  });

  it("resumes a segment from its cursor after a crash mid-drain", async () => {
    const first = `${line("sent-before-crash")}\n`;
    await writeFile(path.join(dir, "segment-0000000001.log"), `${first}${line("b")}\n${line("c")}\n`);
    await writeFile(path.join(dir, "cursor.json"), JSON.stringify({ segment: "segment-0000000001.log", offset: Buffer.byteLength(first) }));
    const broker = new FakeBroker();

    await openOutbox(broker);

    await waitFor(() => broker.sent.length === 2, { what: "the rest of the segment" });
    expect(broker.sent).toEqual(["b", "c"]);
  });

  it("sets aside an event the broker refuses and sends the rest", async () => {
    const broker = new FakeBroker();
    broker.up = false;
    broker.refuse.add("bad");
    const outbox = await openOutbox(broker);
    for (const id of ["a", "bad", "c"]) await outbox.publish(event(id));

    broker.up = true;

    await waitFor(() => broker.sent.length === 2 && !outbox.hasPending(), { what: "the acceptable events" });
    expect(broker.sent).toEqual(["a", "c"]);
    expect(await readFile(path.join(dir, "rejected.log"), "utf8")).toContain('"id":"bad"');
  });

  it("rejects a publish the broker refuses while nothing waits, instead of keeping it", async () => {
    const broker = new FakeBroker();
    broker.refuse.add("bad");
    const outbox = await openOutbox(broker);

    await expect(outbox.publish(event("bad"))).rejects.toThrow("message too large");
    expect(outbox.hasPending()).toBe(false);
  });

  it("keeps an event that met an error from code, stops sending and reports it once, instead of retrying forever", async () => {
    const broker = new FakeBroker();
    broker.bug.add("a");
    const outbox = await openOutbox(broker);

    await outbox.publish(event("a"));
    await outbox.publish(event("b"));
    await new Promise((resolve) => setTimeout(resolve, 200)); // ten retry periods

    expect(broker.attempts).toBe(1);
    expect(broken).toHaveLength(1);
    expect(broken[0]).toBeInstanceOf(TypeError);
    expect(broker.sent).toEqual([]);
    await outbox.close();
    open = [];

    // Both are on disk: the next start (with the bug fixed) sends them, in order.
    broker.bug.clear();
    await openOutbox(broker);
    await waitFor(() => broker.sent.length === 2, { what: "the kept events" });
    expect(broker.sent).toEqual(["a", "b"]);
  });

  it("stops a drain on an error from code too, keeping the rest of the segment", async () => {
    const broker = new FakeBroker();
    broker.up = false;
    const outbox = await openOutbox(broker);
    for (const id of ["a", "b", "c"]) await outbox.publish(event(id));
    broker.bug.add("b");
    broker.up = true;

    await waitFor(() => broken.length === 1, { what: "the stop" });
    const attempts = broker.attempts;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(broker.attempts).toBe(attempts);
    expect(broker.sent).toEqual(["a"]);
    await outbox.close();
    open = [];

    broker.bug.clear();
    await openOutbox(broker);
    await waitFor(() => broker.sent.length === 3, { what: "the rest" });
    expect(broker.sent).toEqual(["a", "b", "c"]);
  });

  it("refuses to open one directory twice", async () => {
    const broker = new FakeBroker();
    await openOutbox(broker);

    await expect(openOutbox(broker)).rejects.toThrow(/already open/);
  });
});
