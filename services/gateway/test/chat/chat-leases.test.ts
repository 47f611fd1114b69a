import { fromUsd } from "@router/money";
import { waitFor } from "@router/testkit";
import { GatewayMetrics } from "../../src/metrics";
import { startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

/**
 * The chat route with spend leases on: requests under a hard ceiling are admitted from a lease,
 * their spend is settled exactly, and Admit still decides refusals and soft ceilings.
 */
const USE_MS = 1000;
let h: ChatHarness;
let metrics: GatewayMetrics;

beforeAll(async () => {
  metrics = new GatewayMetrics({ defaultMetrics: false });
  h = await startChatHarness({ metrics, leaseUseMs: USE_MS });
});

afterAll(async () => {
  await h.close();
});

/** A counter's value; `label` (e.g. `outcome="granted"`) picks one series. */
async function counter(name: string, label = ""): Promise<number> {
  const text = await metrics.registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(label));
  return line ? Number(line.split(" ").pop()) : 0;
}

test("admits a hard-ceiling key's requests from one lease and settles exactly what they cost", async () => {
  const caller = h.addKey("rt-v1-lease", { limitNanos: fromUsd(100), limitMode: "hard", includeByokInLimit: true });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    h.fakes.openai.script({ usage: { prompt: 100 + i, completion: 20 } });
    const res = await h.post({ model: "test/gpt", messages: userMessage(), max_tokens: 50 }, { token: "rt-v1-lease" });
    expect(res.status).toBe(200);
    ids.push(res.body.id);
  }
  expect(await counter("gateway_lease_admissions_total")).toBe(5);
  expect(await counter("gateway_ledger_lease_calls_total", 'outcome="granted"')).toBe(1);

  const costs = await Promise.all(ids.map(async (id) => (await h.eventFor(id)).listCostNanodollars));
  const spent = costs.reduce((a, b) => a + b, 0n);
  expect(spent).toBeGreaterThan(0n);
  // The ledger settles each request's cost on the lease from its record on the bus; usage is what
  // they spent, not the lease's unspent headroom (which Admit still measures while the lease lives).
  await waitFor(async () => (await h.keyUsage(caller)) === spent, { what: "usage of the spend", timeoutMs: 10_000 });

  // Once used for its time the lease is retired and released: the spend remains, counted once.
  h.clock.advance(USE_MS);
  await waitFor(async () => (await h.keyUsage(caller)) === spent, { what: "the spend after the lease's release", timeoutMs: 10_000 });
});

test("still refuses at the ceiling through Admit when too little is left for a lease", async () => {
  h.addKey("rt-v1-lease-spent", { limitNanos: 1_000n, limitMode: "hard", includeByokInLimit: true });
  h.fakes.openai.script({ usage: { prompt: 100, completion: 100 } });
  expect((await h.post({ model: "test/gpt", messages: userMessage() }, { token: "rt-v1-lease-spent" })).status).toBe(200);
  const refused = await waitFor(
    async () => {
      const res = await h.post({ model: "test/gpt", messages: userMessage() }, { token: "rt-v1-lease-spent" });
      return res.status === 403 ? res : undefined;
    },
    { what: "the refusal once spend is settled" },
  );
  expect(refused.body.error).toMatchObject({ code: "budget_exceeded", details: { scope: "key" } });
});

test("a soft ceiling goes through Admit, which warns", async () => {
  h.addKey("rt-v1-lease-soft", { limitNanos: 0n, limitMode: "soft", includeByokInLimit: true });
  const before = await counter("gateway_lease_admissions_total");
  const res = await h.post({ model: "test/gpt", messages: userMessage() }, { token: "rt-v1-lease-soft" });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-router-limit-warning")).toMatch(/limit/);
  expect(await counter("gateway_lease_admissions_total")).toBe(before);
});
