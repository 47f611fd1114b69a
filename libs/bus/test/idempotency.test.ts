import { createMemoryIdempotencyStore, idempotent, type IncomingEvent } from "../src";

const event = (id: string): IncomingEvent => ({
  id,
  topic: "t",
  key: "k",
  type: "router.test.v1",
  payload: new Uint8Array(),
  headers: {},
  attempt: 1,
});

describe("idempotent", () => {
  it("runs the handler once per event id", async () => {
    const effects: string[] = [];
    const handler = idempotent(createMemoryIdempotencyStore(), async (e) => void effects.push(e.id));

    for (const id of ["a", "a", "b", "a"]) await handler(event(id));

    expect(effects).toEqual(["a", "b"]);
  });

  it("does not remember an event whose handler failed, so its redelivery runs", async () => {
    let calls = 0;
    const handler = idempotent(createMemoryIdempotencyStore(), async () => {
      calls += 1;
      if (calls === 1) throw new Error("transient");
    });

    await expect(handler(event("a"))).rejects.toThrow("transient");
    await handler(event("a"));
    await handler(event("a"));

    expect(calls).toBe(2);
  });

  it("forgets the oldest ids beyond its capacity", async () => {
    const store = createMemoryIdempotencyStore({ maxEntries: 2 });
    for (const id of ["a", "b", "c"]) await store.remember(id);

    expect(await store.seen("a")).toBe(false);
    expect(await store.seen("c")).toBe(true);
  });
});
