import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DomainError } from "@router/errors";
import { uniqueName, waitFor } from "@router/testkit";
import {
  createMemoryIdempotencyStore,
  dlqTopicOf,
  HEADER_CONTENT_TYPE,
  HEADER_DLQ_ORIGINAL_TOPIC,
  HEADER_EVENT_ID,
  HEADER_EVENT_TYPE,
  idempotent,
  PROTOBUF_CONTENT_TYPE,
  type BusConfig,
  type EventBus,
  type EventHandler,
  type IdempotencyStore,
  type IncomingEvent,
} from "../src";

/** Makes a new client of the broker under test, as another process would; overrides tune it. */
export type MakeBus = (overrides?: Partial<BusConfig>) => Promise<EventBus>;

/** A broker connection that a test can cut and restore, to play the broker going away. */
export interface BrokerOutage {
  /** A bus whose connection to the broker runs through the cut. */
  makeBus: MakeBus;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export interface ContractOptions {
  /** Creates a topic and its `.dlq` before use, where the deployment must (kafka: buses never do). */
  declare?(topic: string): Promise<void>;
  /** Deletes what the broker keeps for these topics (their `.dlq` included). */
  cleanup?(topics: string[]): Promise<void>;
  /** Absent when the adapter has no broker to lose (memory). */
  outage?(): Promise<BrokerOutage>;
  idempotencyStore?(scope: string): IdempotencyStore;
  /** The broker counts deliveries, so an event taken over after a crash arrives with attempt > 1. */
  countsCrashRedeliveries?: boolean;
}

const TYPE = "router.test.happened.v1";
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (event: IncomingEvent) => Buffer.from(event.payload).toString("utf8");

/**
 * The one behaviour every bus adapter must show. Each adapter's test file calls it with a factory
 * of buses on its broker.
 */
export function runBusContract(name: string, makeBus: MakeBus, options: ContractOptions = {}): void {
  describe(`${name} bus contract`, () => {
    const topics: string[] = [];
    let open: EventBus[] = [];
    let cleanups: Array<() => unknown> = [];

    const topic = async (label: string) => {
      const t = uniqueName(`bus.${label}`);
      topics.push(t, dlqTopicOf(t));
      await options.declare?.(t);
      return t;
    };
    const bus = async (overrides?: Partial<BusConfig>, make: MakeBus = makeBus) => {
      const b = await make(overrides);
      open.push(b);
      return b;
    };

    const closeAll = async () => {
      for (const fn of cleanups) await fn();
      cleanups = [];
      await Promise.all(open.map((b) => b.close()));
      open = [];
    };
    afterEach(closeAll);
    afterAll(async () => {
      await options.cleanup?.(topics);
    });

    it("delivers one key's events in publish order across group members, through a retry", async () => {
      const t = await topic("order");
      const [a, b, producer] = await Promise.all([bus(), bus(), bus()]);
      const seen = new Map<string, number[]>();
      let failed = false;
      const handler: EventHandler = async (event) => {
        const [key = "", n = ""] = decode(event).split(":");
        if (key === "k1" && n === "3" && !failed) {
          failed = true;
          throw new Error("transient failure");
        }
        seen.set(key, [...(seen.get(key) ?? []), Number(n)]);
      };
      await a.subscribe({ topic: t, group: "g", handler });
      await b.subscribe({ topic: t, group: "g", handler });

      const keys = ["k0", "k1", "k2", "k3", "k4", "k5"];
      for (let n = 0; n < 10; n++) {
        for (const key of keys) await producer.publish({ topic: t, key, type: TYPE, payload: encode(`${key}:${n}`) });
      }

      await waitFor(() => [...seen.values()].reduce((sum, list) => sum + list.length, 0) >= 60, { what: "60 events" });
      for (const key of keys) expect(seen.get(key)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(failed).toBe(true);
    });

    it("carries the key, type, payload and standard headers", async () => {
      const t = await topic("headers");
      const [consumer, producer] = await Promise.all([bus(), bus()]);
      const got: IncomingEvent[] = [];
      await consumer.subscribe({ topic: t, group: "g", handler: async (e) => void got.push(e) });

      await producer.publish({
        topic: t,
        key: "org_1",
        type: TYPE,
        id: "evt-fixed-1",
        payload: Uint8Array.from([0, 1, 254, 255]),
        headers: { traceparent: "00-abc-def-01" },
      });

      const [event] = await waitFor(() => got.length === 1 && got, { what: "the event" });
      expect(event).toMatchObject({ id: "evt-fixed-1", topic: t, key: "org_1", type: TYPE, attempt: 1 });
      expect([...event!.payload]).toEqual([0, 1, 254, 255]);
      expect(event!.headers).toMatchObject({
        [HEADER_EVENT_ID]: "evt-fixed-1",
        [HEADER_EVENT_TYPE]: TYPE,
        [HEADER_CONTENT_TYPE]: PROTOBUF_CONTENT_TYPE,
        traceparent: "00-abc-def-01",
      });
    });

    it("shares a group's work between its members and handles every event once", async () => {
      const t = await topic("share");
      const [a, b, producer] = await Promise.all([bus(), bus(), bus()]);
      const handledBy = new Map<string, string[]>();
      const record = (member: string): EventHandler => async (event) => {
        handledBy.set(event.id, [...(handledBy.get(event.id) ?? []), member]);
      };
      await a.subscribe({ topic: t, group: "g", handler: record("a") });
      await b.subscribe({ topic: t, group: "g", handler: record("b") });

      // A new member gets its share after a rebalance; keep publishing until both have worked.
      const published: string[] = [];
      let round = 0;
      const members = () => new Set([...handledBy.values()].flat());
      await waitFor(
        async () => {
          for (let i = 0; i < 8; i++) {
            const id = `evt-${round}-${i}`;
            published.push(id);
            await producer.publish({ topic: t, key: `key-${round}-${i}`, type: TYPE, id, payload: encode(id) });
          }
          round += 1;
          return members().size === 2;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: "both members to handle events" },
      );
      await waitFor(() => published.every((id) => handledBy.has(id)), { what: "every event handled" });

      for (const id of published) expect(handledBy.get(id)).toHaveLength(1);
      expect(members()).toEqual(new Set(["a", "b"]));
    });

    it("gives every group every event", async () => {
      const t = await topic("groups");
      const [one, two, producer] = await Promise.all([bus(), bus(), bus()]);
      const got = { one: new Set<string>(), two: new Set<string>() };
      await one.subscribe({ topic: t, group: "one", handler: async (e) => void got.one.add(e.id) });
      await two.subscribe({ topic: t, group: "two", handler: async (e) => void got.two.add(e.id) });

      const ids = Array.from({ length: 10 }, (_, i) => `evt-${i}`);
      for (const [i, id] of ids.entries()) {
        await producer.publish({ topic: t, key: `k${i % 3}`, type: TYPE, id, payload: encode(id) });
      }

      await waitFor(() => got.one.size === 10 && got.two.size === 10, { what: "both groups to get all" });
      expect([...got.one].sort()).toEqual([...ids].sort());
      expect([...got.two].sort()).toEqual([...ids].sort());
    });

    it("gives each group its own payload bytes: a handler that overwrites them changes no one else's", async () => {
      const t = await topic("own-bytes");
      const [one, two, producer] = await Promise.all([bus(), bus(), bus()]);
      const seenByTwo: string[] = [];
      let scribbled = 0;
      // The first group scribbles over every payload it gets, alone and in batches.
      const scribble = (e: IncomingEvent) => {
        e.payload.fill(0x21);
        scribbled += 1;
      };
      await one.subscribe({ topic: t, group: "scribbler", handler: async (e) => scribble(e), batchHandler: async (batch) => batch.forEach(scribble) });
      await two.subscribe({
        topic: t,
        group: "reader",
        handler: async (e) => void seenByTwo.push(decode(e)),
        batchHandler: async (batch) => void seenByTwo.push(...batch.map(decode)),
      });

      const sent = Array.from({ length: 20 }, (_, i) => `event-${i}`);
      const buffers = sent.map(encode);
      await Promise.all(buffers.map((payload, i) => producer.publish({ topic: t, key: `k${i % 2}`, type: TYPE, payload })));

      await waitFor(() => scribbled >= sent.length && seenByTwo.length >= sent.length, { what: "both groups to get every event" });
      expect([...seenByTwo].sort()).toEqual([...sent].sort());
      // The publisher's own buffers are untouched too.
      expect(buffers.map((b) => Buffer.from(b).toString("utf8"))).toEqual(sent);
    });

    it("gives a service that reads two topics every event of both, on each of its replicas' shares", async () => {
      // One service group on two topics, two replicas: on Kafka a group spanning both topics lost
      // one of them (kafkajs's leader assigns only the topics it subscribed itself).
      const [first, second] = [await topic("two-a"), await topic("two-b")];
      const [replicaA, replicaB, producer] = await Promise.all([bus(), bus(), bus()]);
      const got = new Map<string, Set<string>>([[first, new Set()], [second, new Set()]]);
      const record: EventHandler = async (e) => void got.get(e.topic)?.add(e.id);
      for (const replica of [replicaA, replicaB]) {
        await replica.subscribe({ topic: first, group: "alerts", handler: record });
        await replica.subscribe({ topic: second, group: "alerts", handler: record });
      }

      const ids = (t: string) => Array.from({ length: 16 }, (_, i) => `${t}-evt-${i}`);
      for (const t of [first, second]) {
        for (const [i, id] of ids(t).entries()) await producer.publish({ topic: t, key: `org-${i}`, type: TYPE, id, payload: encode(id) });
      }

      await waitFor(() => got.get(first)!.size === 16 && got.get(second)!.size === 16, { timeoutMs: 20_000, what: "16 events of each topic" });
      expect([...got.get(first)!].sort()).toEqual(ids(first).sort());
      expect([...got.get(second)!].sort()).toEqual(ids(second).sort());
    });

    it("redelivers a failed handler's event with the next attempt number", async () => {
      const t = await topic("retry");
      const [consumer, producer] = await Promise.all([bus(), bus()]);
      const attempts: number[] = [];
      await consumer.subscribe({
        topic: t,
        group: "g",
        handler: async (e) => {
          attempts.push(e.attempt);
          if (e.attempt === 1) throw new Error("first try fails");
        },
      });

      await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode("x") });

      await waitFor(() => attempts.length === 2, { what: "a second delivery" });
      expect(attempts).toEqual([1, 2]);
    });

    it("hands an event to another group member when its consumer crashes mid-handler", async () => {
      const t = await topic("crash");
      const [crashing, survivor, producer] = await Promise.all([bus(), bus(), bus()]);
      let release: () => void = () => undefined;
      const hung = new Promise<void>((resolve) => (release = resolve));
      cleanups.push(() => release());
      const crashedOn: IncomingEvent[] = [];
      await crashing.subscribe({
        topic: t,
        group: "g",
        handler: async (e) => {
          crashedOn.push(e);
          await hung; // never acknowledges: the process froze or died here
        },
      });
      await producer.publish({ topic: t, key: "k", type: TYPE, id: "evt-crash", payload: encode("x") });
      await waitFor(() => crashedOn.length === 1, { what: "the first delivery" });

      const rescued: IncomingEvent[] = [];
      await survivor.subscribe({ topic: t, group: "g", handler: async (e) => void rescued.push(e) });

      const [event] = await waitFor(() => rescued.length > 0 && rescued, { timeoutMs: 20_000, what: "redelivery" });
      expect(event!.id).toBe("evt-crash");
      if (options.countsCrashRedeliveries) expect(event!.attempt).toBeGreaterThanOrEqual(2);
    });

    it("lets an idempotent consumer skip a duplicate by event id", async () => {
      const t = await topic("dedupe");
      const [consumer, producer] = await Promise.all([bus(), bus()]);
      const store = options.idempotencyStore?.(uniqueName("scope")) ?? createMemoryIdempotencyStore();
      let deliveries = 0;
      const effects: string[] = [];
      const onlyOnce = idempotent(store, async (e) => void effects.push(e.id));
      await consumer.subscribe({
        topic: t,
        group: "g",
        // Counted once handled, so the wait below also waits for the last effect.
        handler: async (e) => {
          await onlyOnce(e);
          deliveries += 1;
        },
      });

      for (const id of ["evt-a", "evt-a", "evt-b"]) {
        await producer.publish({ topic: t, key: "k", type: TYPE, id, payload: encode(id) });
      }

      await waitFor(() => deliveries === 3, { what: "three deliveries" });
      expect(effects).toEqual(["evt-a", "evt-b"]);
    });

    it("moves an event whose handler always fails to <topic>.dlq after maxAttempts, then goes on", async () => {
      const t = await topic("poison");
      const [consumer, dlqConsumer, producer] = await Promise.all([bus(), bus(), bus()]);
      const attempts: number[] = [];
      const handled: string[] = [];
      await consumer.subscribe({
        topic: t,
        group: "g",
        maxAttempts: 3,
        handler: async (e) => {
          if (decode(e) === "poison") {
            attempts.push(e.attempt);
            throw new Error("cannot handle this");
          }
          handled.push(decode(e));
        },
      });
      const dead: IncomingEvent[] = [];
      await dlqConsumer.subscribe({ topic: dlqTopicOf(t), group: "dlq-reader", handler: async (e) => void dead.push(e) });

      await producer.publish({ topic: t, key: "k", type: TYPE, id: "evt-poison", payload: encode("poison") });
      await producer.publish({ topic: t, key: "k", type: TYPE, id: "evt-after", payload: encode("after") });

      await waitFor(() => dead.length === 1 && handled.length === 1, { what: "dead letter and the next event" });
      expect(attempts).toEqual([1, 2, 3]);
      expect(dead[0]).toMatchObject({ id: "evt-poison", key: "k", type: TYPE, topic: dlqTopicOf(t) });
      expect(decode(dead[0]!)).toBe("poison");
      expect(dead[0]!.headers[HEADER_DLQ_ORIGINAL_TOPIC]).toBe(t);
      expect(handled).toEqual(["after"]);
    });

    it("keeps retrying an event past maxAttempts while its handler's dependency is unavailable, and never dead-letters it", async () => {
      const t = await topic("outage");
      const [consumer, dlqConsumer, producer] = await Promise.all([bus(), bus(), bus()]);
      let away = true;
      const attempts: number[] = [];
      const handled: string[] = [];
      await consumer.subscribe({
        topic: t,
        group: "g",
        maxAttempts: 2,
        handler: async (e) => {
          if (away) {
            attempts.push(e.attempt);
            throw new DomainError("unavailable", "the database connection was lost", { cause: new Error("Connection terminated unexpectedly") });
          }
          handled.push(decode(e));
        },
      });
      const dead: IncomingEvent[] = [];
      await dlqConsumer.subscribe({ topic: dlqTopicOf(t), group: "dlq-reader", handler: async (e) => void dead.push(e) });

      await producer.publish({ topic: t, key: "k", type: TYPE, id: "evt-waits", payload: encode("waits") });
      await producer.publish({ topic: t, key: "k", type: TYPE, id: "evt-behind", payload: encode("behind") });
      await waitFor(() => attempts.length >= 4, { what: "four failed deliveries, twice maxAttempts" });
      away = false;

      await waitFor(() => handled.length === 2, { what: "both events once the dependency is back" });
      expect(handled).toEqual(["waits", "behind"]);
      expect(dead).toEqual([]);
      // The attempt a handler sees never passes maxAttempts: an outage does not use the event up.
      expect(Math.max(...attempts)).toBeLessThanOrEqual(2);
    });

    it("with a batch handler, handles every event once, in key order, whether batched or alone", async () => {
      const t = await topic("batch");
      const [consumer, producer] = await Promise.all([bus(), bus()]);
      const seen: string[] = [];
      await consumer.subscribe({
        topic: t,
        group: "g",
        handler: async (e) => void seen.push(decode(e)),
        batchHandler: async (batch) => void seen.push(...batch.map(decode)),
      });

      const sent = Array.from({ length: 60 }, (_, i) => `${i % 2 === 0 ? "a" : "b"}:${i}`);
      await Promise.all(sent.map((text) => producer.publish({ topic: t, key: text.split(":")[0]!, type: TYPE, payload: encode(text) })));

      await waitFor(() => seen.length >= sent.length, { what: "every event" });
      // One more event per key: in key order, it arrives after anything the batches could still
      // hand over twice, so what was seen by then is complete.
      const markers = ["a:end", "b:end"];
      await Promise.all(markers.map((text) => producer.publish({ topic: t, key: text.split(":")[0]!, type: TYPE, payload: encode(text) })));
      await waitFor(() => markers.every((m) => seen.includes(m)), { what: "the end markers" });
      expect([...seen].sort()).toEqual([...sent, ...markers].sort());
      for (const key of ["a", "b"]) {
        const order = seen.filter((s) => s.startsWith(`${key}:`) && !s.endsWith(":end")).map((s) => Number(s.split(":")[1]));
        expect(order).toEqual([...order].sort((x, y) => x - y));
      }
    });

    it("retries a failed batch's events alone, so one that cannot be handled dead-letters alone", async () => {
      const t = await topic("batch-poison");
      const [consumer, dlqConsumer, producer] = await Promise.all([bus(), bus(), bus()]);
      const handled: string[] = [];
      const fail = (texts: string[]) => {
        if (texts.includes("poison")) throw new Error("cannot handle this");
      };
      await consumer.subscribe({
        topic: t,
        group: "g",
        maxAttempts: 2,
        handler: async (e) => {
          fail([decode(e)]);
          handled.push(decode(e));
        },
        batchHandler: async (batch) => {
          fail(batch.map(decode));
          handled.push(...batch.map(decode));
        },
      });
      const dead: IncomingEvent[] = [];
      await dlqConsumer.subscribe({ topic: dlqTopicOf(t), group: "dlq-reader", handler: async (e) => void dead.push(e) });

      const texts = ["one", "two", "poison", "three", "four"];
      for (const text of texts) await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode(text) });

      await waitFor(() => dead.length === 1 && handled.length === 4, { timeoutMs: 20_000, what: "the dead letter and the rest" });
      expect(decode(dead[0]!)).toBe("poison");
      expect(handled).toEqual(["one", "two", "three", "four"]);
    });

    // The memory bus lives in the process: there is no broker to lose.
    const withBroker = options.outage ? describe : describe.skip;
    withBroker("while the broker is unreachable", () => {
      let outage: BrokerOutage;
      let outboxDirs: string[] = [];
      beforeEach(async () => {
        outage = await options.outage!();
      });
      afterEach(async () => {
        await closeAll(); // while the broker is reachable: a client closing into a cut connection lingers
        await outage.close();
        for (const dir of outboxDirs) await rm(dir, { recursive: true, force: true });
        outboxDirs = [];
      });
      const outboxDir = async () => {
        const dir = await mkdtemp(path.join(os.tmpdir(), "bus-outbox-"));
        outboxDirs.push(dir);
        return dir;
      };

      it("loses no event published while the broker is away and keeps their order", async () => {
        const t = await topic("outage");
        const producer = await bus({ outboxDir: await outboxDir() }, outage.makeBus);
        const consumer = await bus();
        const got: string[] = [];
        await consumer.subscribe({ topic: t, group: "g", handler: async (e) => void got.push(decode(e)) });
        await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode("before") });
        await waitFor(() => got.length === 1, { what: "the event sent while the broker is up" });

        await outage.cut();
        const during = Array.from({ length: 10 }, (_, i) => `during-${i}`);
        for (const text of during) await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode(text) });
        await outage.restore();
        await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode("after") });

        await waitFor(() => got.length >= 12, { timeoutMs: 20_000, what: "every event after the broker returned" });
        expect(got).toEqual(["before", ...during, "after"]);
      });

      it("lets a consumer that lost its broker connection carry on where it stopped", async () => {
        const t = await topic("reconnect");
        const consumer = await bus({}, outage.makeBus);
        const producer = await bus();
        const got: string[] = [];
        await consumer.subscribe({ topic: t, group: "g", handler: async (e) => void got.push(decode(e)) });
        await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode("before") });
        await waitFor(() => got.length === 1, { what: "the event before the cut" });

        await outage.cut();
        const during = Array.from({ length: 5 }, (_, i) => `during-${i}`);
        for (const text of during) await producer.publish({ topic: t, key: "k", type: TYPE, payload: encode(text) });
        await outage.restore();

        await waitFor(() => got.length >= 6, { timeoutMs: 20_000, what: "the events published during the cut" });
        expect(got).toEqual(["before", ...during]);
      });

      it("sends what the outbox kept after the producer restarts", async () => {
        const t = await topic("restart");
        const dir = await outboxDir();
        const consumer = await bus();
        const got: string[] = [];
        await consumer.subscribe({ topic: t, group: "g", handler: async (e) => void got.push(decode(e)) });

        await outage.cut();
        const first = await outage.makeBus({ outboxDir: dir });
        for (const text of ["one", "two", "three"]) {
          await first.publish({ topic: t, key: "k", type: TYPE, payload: encode(text) });
        }
        await first.close();
        await outage.restore();
        await bus({ outboxDir: dir }, outage.makeBus);

        await waitFor(() => got.length >= 3, { timeoutMs: 20_000, what: "the kept events" });
        expect(got).toEqual(["one", "two", "three"]);
      });
    });
  });
}
