import { once } from "node:events";
import { fromUsd } from "@router/money";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * Spend survives a gateway that dies: the ledger settles finished requests from their
 * `router.request.completed.v1` records on the bus, not from the gateway's memory; a hold whose
 * gateway stopped renewing it ends within the hold TTL (short here), charged at its worst case, with
 * the request recorded as `router.gateway_lost` (a lease's running requests too, each charged its
 * worst case); and usage never counts a lease's unspent headroom.
 */
describe("durable settlement", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmtKey: string;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: {
        LEDGER_HOLD_TTL_MS: "3000",
        LEDGER_LEASE_TTL_MS: "3000",
        LEDGER_SWEEP_INTERVAL_MS: "500",
        GATEWAY_HOLD_RENEW_MS: "500",
        // The tests poll activity and usage with one management key.
        GATEWAY_RATE_LIMITS: JSON.stringify({ management: { per_minute: 100_000, per_day: 1_000_000 } }),
      },
    });
    mgmtKey = (await stack.createOrg("Acme")).managementKey;
    const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-acme-0001" })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  async function replicaAndKey(name: string, limit: Record<string, unknown>) {
    const url = await stack.startGatewayReplica();
    const replica = stack.services.at(-1);
    if (!replica) throw new Error("no replica");
    const created = await gatewayClient(url, mgmtKey).post("/v1/keys", { name, include_byok_in_limit: true, limit_reset: "lifetime", ...limit });
    if (created.status !== 201) throw new Error(`key create: ${created.status} ${JSON.stringify(created.json)}`);
    return { url, replica, key: created.json.data.key as string, hash: created.json.data.hash as string };
  }

  const mgmt = () => gatewayClient(stack.gatewayUrl, mgmtKey);

  async function keyUsage(hash: string): Promise<number | undefined> {
    const keys = (await mgmt().get("/v1/keys")).json.data as Array<{ hash: string; usage: number }>;
    return keys.find((k) => k.hash === hash)?.usage;
  }

  async function activityRows(ids: string[]): Promise<Array<Record<string, any>>> {
    return waitFor(async () => {
      const found = await Promise.all(ids.map(async (id) => (await mgmt().get(`/v1/activity/requests/${id}`)).json.data));
      return found.every(Boolean) ? (found as Array<Record<string, any>>) : undefined;
    }, { timeoutMs: 15_000, intervalMs: 250, what: "every request in activity" });
  }

  it.each([
    ["a hard ceiling (spend leases)", "hard"],
    ["a soft ceiling (holds from Admit)", "soft"],
  ])("counts every served request when the gateway is killed right after answering: %s", async (_what, mode) => {
    const { url, replica, key, hash } = await replicaAndKey(`killed-${mode}`, { limit: 100, limit_mode: mode });
    const client = gatewayClient(url, key);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => client.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hello" }] })),
    );
    // Within the gateway's 50 ms closing batch: before, these settlements died with the process.
    replica.child.kill("SIGKILL");
    await once(replica.child, "exit");
    // A failed answer shows its body, so a refusal or an outage says which.
    expect(answers.map((a) => (a.status === 200 ? 200 : `${a.status} ${JSON.stringify(a.json)}`))).toEqual(answers.map(() => 200));
    // Every answer was written after its record was on the bus.
    const rows = await activityRows(answers.map((a) => a.json.id as string));
    const listNanos = rows
      .flatMap((r) => (r.usage_lines ?? []) as Array<{ cost_nanodollars: string }>)
      .reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n);
    expect(listNanos).toBeGreaterThan(0n);
    const served = Number(listNanos) / 1e9;
    if (mode === "soft") {
      const usage = await waitFor(async () => {
        const u = await keyUsage(hash);
        return u !== undefined && Math.abs(u - served) < 1e-9 ? u : undefined;
      }, { timeoutMs: 20_000, what: "the ledger's usage to equal the served cost" });
      expect(usage).toBeCloseTo(served, 9);
      return;
    }
    // The killed gateway's lease expires (TTL 3 s). Every request it last reported running had its
    // record on the bus already, so none is charged as lost: usage is exactly what was served.
    await new Promise((r) => setTimeout(r, 4_500));
    const usage = await waitFor(async () => {
      const u = await keyUsage(hash);
      return u !== undefined && Math.abs(u - served) < 1e-9 ? u : undefined;
    }, { timeoutMs: 20_000, what: "the ledger's usage to equal the served cost" });
    expect(usage).toBeCloseTo(served, 9);
  }, 60_000);

  it("ends a dead gateway's hold within the TTL, charged at its worst case, and records the request as gateway_lost", async () => {
    const { url, replica, key, hash } = await replicaAndKey("lost", { limit: 100, limit_mode: "soft" });
    openai.script({ chunks: Array.from({ length: 100 }, (_v, i) => `w${i} `), chunkDelayMs: 200, usage: { prompt: 10, completion: 100 } });
    const before = openai.requests.length;
    void gatewayClient(url, key)
      .stream({ model: "openai/gpt-4o-mini", max_tokens: 500, messages: [{ role: "user", content: "Count slowly" }] })
      .catch(() => undefined);
    await waitFor(() => openai.requests.length > before, { what: "the stream dispatched" });
    await new Promise((r) => setTimeout(r, 400));
    const inFlight = await keyUsage(hash);
    expect(inFlight).toBeGreaterThan(0);
    const killedAt = Date.now();
    replica.child.kill("SIGKILL");
    await once(replica.child, "exit");
    const lost = await waitFor(async () => {
      const rows = (await mgmt().get("/v1/activity?limit=50")).json.data as Array<Record<string, any>>;
      return rows.find((r) => r.error_code === "router.gateway_lost");
    }, { timeoutMs: 20_000, what: "the lost request in activity" });
    // TTL 3 s + sweep 0.5 s, with room for the bus.
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(lost).toMatchObject({ status: "error", error_code: "router.gateway_lost" });
    // The worst case moved from reserved to spent: usage stays, not free.
    expect(await keyUsage(hash)).toBeCloseTo(inFlight as number, 9);
  }, 60_000);

  /** The month's activity as the CSV export has it (the list price of each request): one record per request. */
  async function exportedRows(): Promise<Array<Record<string, string>>> {
    const res = await fetch(`${stack.gatewayUrl}/v1/activity/export`, { headers: { authorization: `Bearer ${mgmtKey}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`export: ${res.status} ${text}`);
    const [header = "", ...lines] = text.trim().split("\n");
    const columns = header.split(",");
    return lines.map((line) => Object.fromEntries(line.split(",").map((v, i) => [columns[i] ?? "", v])));
  }

  it("records the streams a killed gateway was serving from spend leases as gateway_lost at their worst case: usage equals the recorded costs", async () => {
    // A hard limit: the gateway admits these from a spend lease, with no Admit call each.
    const { url, replica, key, hash } = await replicaAndKey("lost-leased", { limit: 100 });
    const slow = { chunks: Array.from({ length: 100 }, (_v, i) => `w${i} `), chunkDelayMs: 200, usage: { prompt: 10, completion: 100 } };
    openai.script(slow, slow, slow);
    const before = openai.requests.length;
    const lostIds = async () =>
      ((await mgmt().get("/v1/activity?limit=50")).json.data as Array<Record<string, any>>)
        .filter((r) => r.error_code === "router.gateway_lost")
        .map((r) => r.id as string);
    const lostBefore = new Set(await lostIds());
    const client = gatewayClient(url, key);
    for (let i = 0; i < 3; i++) {
      void client.stream({ model: "openai/gpt-4o-mini", max_tokens: 500, messages: [{ role: "user", content: `Count ${i}` }] }).catch(() => undefined);
    }
    await waitFor(() => openai.requests.length >= before + 3, { what: "the three streams dispatched" });
    // The lease's cover, naming the three, reaches the ledger with the next 50 ms batch.
    await new Promise((r) => setTimeout(r, 400));
    const inFlight = await keyUsage(hash);
    expect(inFlight).toBeGreaterThan(0);
    replica.child.kill("SIGKILL");
    await once(replica.child, "exit");

    const ids = await waitFor(async () => {
      const lost = (await lostIds()).filter((id) => !lostBefore.has(id));
      return lost.length >= 3 ? lost : undefined;
    }, { timeoutMs: 20_000, intervalMs: 250, what: "the three streams in activity as gateway_lost" });
    expect(ids).toHaveLength(3);
    // Each names the key whose lease admitted it.
    const rows = await activityRows(ids);
    expect(rows.map((r) => r.key?.hash)).toEqual([hash, hash, hash]);
    const exported = (await exportedRows()).filter((r) => ids.includes(r.request_id ?? ""));
    expect(exported).toHaveLength(3);
    const recorded = exported.reduce((sum, r) => sum + fromUsd(r.list_price_usd ?? "0"), 0n);
    // Each at its worst case: together, what the key's usage counted while they ran.
    expect(Number(recorded) / 1e9).toBeCloseTo(inFlight as number, 9);
    const usage = await waitFor(async () => {
      const u = await keyUsage(hash);
      return u !== undefined && Math.abs(u - Number(recorded) / 1e9) < 1e-9 ? u : undefined;
    }, { timeoutMs: 20_000, what: "the ledger's usage to equal the recorded costs" });
    expect(usage).toBeCloseTo(Number(recorded) / 1e9, 9);
  }, 60_000);

  it("reports a lease's running requests, not its unspent headroom, as usage", async () => {
    const { url, key, hash } = await replicaAndKey("headroom", { limit: 1 });
    openai.script({ chunks: Array.from({ length: 30 }, (_v, i) => `w${i} `), chunkDelayMs: 100, usage: { prompt: 10, completion: 30 } });
    const client = gatewayClient(url, key);
    const before = openai.requests.length;
    const stream = client.stream({ model: "openai/gpt-4o-mini", max_tokens: 200, messages: [{ role: "user", content: "Count" }] });
    await waitFor(() => openai.requests.length > before, { what: "the stream dispatched" });
    await new Promise((r) => setTimeout(r, 300));
    const own = (await client.get("/v1/key")).json.data as { usage: number; limit_remaining: number };
    // One request's worst case (200 completion tokens), where the lease holds 64 of them.
    expect(own.usage).toBeGreaterThan(0);
    expect(own.usage).toBeLessThan(0.001);
    expect(own.limit_remaining).toBeCloseTo(1 - own.usage, 9);
    await stream;
    await waitFor(async () => ((await keyUsage(hash)) ?? 1) < own.usage || undefined, { what: "settled below the worst case" });
  }, 60_000);
});
