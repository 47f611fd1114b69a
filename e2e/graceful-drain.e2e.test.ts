import { once } from "node:events";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack, type StreamResponse } from "@router/testkit";

const GRACE_MS = 3_000;

/**
 * A gateway stopped with SIGTERM while streams are in flight (a rollout): streams that end within
 * the grace period finish untouched; the ones still open at its end get the error chunk and are
 * recorded with the gateway's own reason, not the client's; and every settlement reaches the ledger,
 * so the ledger's usage equals what activity recorded.
 */
describe("graceful drain of a gateway", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmtKey: string;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url }, extraEnv: { GATEWAY_DRAIN_GRACE_MS: String(GRACE_MS) } });
    mgmtKey = (await stack.createOrg("Acme")).managementKey;
    const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-acme-0001" })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  /** Starts a gateway replica, a key, and `n` streams through it; resolves once every stream sent content. */
  async function streamsInFlight(n: number, chunks: number, chunkDelayMs: number) {
    const url = await stack.startGatewayReplica();
    const replica = stack.services.at(-1);
    if (!replica) throw new Error("no replica");
    const mgmt = gatewayClient(url, mgmtKey);
    const created = await mgmt.post("/v1/keys", { name: `drain-${n}-${chunks}`, include_byok_in_limit: true, limit: 100, limit_reset: "lifetime" });
    const key = created.json.data.key as string;
    const hash = created.json.data.hash as string;
    const words = Array.from({ length: chunks }, (_v, i) => `w${i} `);
    openai.script(...Array.from({ length: n }, () => ({ chunks: words, chunkDelayMs, usage: { prompt: 1_000, completion: chunks } })));
    const before = openai.requests.length;
    const client = gatewayClient(url, key);
    const streams = Array.from({ length: n }, () =>
      client.stream({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Count slowly" }] }),
    );
    await waitFor(() => openai.requests.length >= before + n, { what: "every stream dispatched" });
    await new Promise((r) => setTimeout(r, chunkDelayMs * 2));
    return { replica, streams, hash };
  }

  /** The ledger's usage of a key next to the list cost activity recorded for its requests. */
  async function ledgerAndActivity(hash: string, ids: string[]) {
    const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    const rows = await waitFor(async () => {
      const found = await Promise.all(ids.map(async (id) => (await mgmt.get(`/v1/activity/requests/${id}`)).json.data));
      return found.every(Boolean) ? (found as Array<Record<string, any>>) : undefined;
    }, { timeoutMs: 15_000, what: "every request in activity" });
    const listNanos = rows
      .flatMap((r) => (r.usage_lines ?? []) as Array<{ cost_nanodollars: string }>)
      .reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n);
    const usage = await waitFor(async () => {
      const keys = (await mgmt.get("/v1/keys")).json.data as Array<{ hash: string; usage: number }>;
      const u = keys.find((k) => k.hash === hash)?.usage;
      return u !== undefined && u > 0 ? u : undefined;
    }, { timeoutMs: 15_000, what: "the ledger's usage" });
    return { rows, listUsd: Number(listNanos) / 1e9, usage };
  }

  it("lets streams that end within the grace finish untouched, and settles every one", async () => {
    const { replica, streams, hash } = await streamsInFlight(4, 8, 150);
    replica.child.kill("SIGTERM");
    const done: StreamResponse[] = await Promise.all(streams);
    await once(replica.child, "exit");
    for (const s of done) {
      expect(s.status).toBe(200);
      expect(s.done).toBe(true);
      expect(s.chunks.some((c) => c.error)).toBe(false);
      expect(s.chunks.at(-1)?.usage?.completion_tokens).toBe(8);
    }
    const ids = done.map((s) => s.chunks[0]?.id as string);
    const { rows, listUsd, usage } = await ledgerAndActivity(hash, ids);
    expect(rows.every((r) => r.status === "complete")).toBe(true);
    expect(usage).toBeCloseTo(listUsd, 9);
  }, 60_000);

  it("cuts streams still open at the end of the grace with an error chunk, recorded as the gateway's stop, and settles them", async () => {
    const { replica, streams, hash } = await streamsInFlight(3, 200, 100);
    const stoppedAt = Date.now();
    replica.child.kill("SIGTERM");
    const done: StreamResponse[] = await Promise.all(streams);
    await once(replica.child, "exit");
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(GRACE_MS - 200);
    for (const s of done) {
      expect(s.done).toBe(true);
      const last = s.chunks.at(-1);
      expect(last?.error).toMatchObject({ code: "router.gateway_shutdown" });
      expect(last?.choices?.[0]?.finish_reason).toBe("error");
    }
    const ids = done.map((s) => s.chunks[0]?.id as string);
    const { rows, listUsd, usage } = await ledgerAndActivity(hash, ids);
    for (const r of rows) expect(r).toMatchObject({ status: "error", error_code: "router.gateway_shutdown", cancelled: false });
    expect(usage).toBeCloseTo(listUsd, 9);
  }, 60_000);
});
