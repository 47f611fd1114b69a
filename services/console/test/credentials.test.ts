import type { consoleRpc } from "@router/proto";
import { IDENTITY_HEADER, signIdentity, type Identity } from "@router/http-kit";
import { ProviderCredentialSealer, providerCredentialContext } from "@router/sealing";
import { call, startConsoleHarness, type ConsoleHarness } from "./console-harness";

/**
 * The console's provider credentials: the routes as the gateway forwards them (a signed identity, the
 * role checked here), and ConsoleService over gRPC (in process), as the gateway's dispatch view asks it.
 */
let h: ConsoleHarness;
beforeAll(async () => {
  h = await startConsoleHarness("ccreds");
});
afterAll(async () => h.close());

const who = (orgId: string, role: Identity["role"] = "owner"): Identity => ({
  orgId,
  credential: "management",
  keyHash: "a".repeat(64),
  keyName: "ops",
  workspaceId: null,
  role,
  userId: null,
  operator: false,
});

async function as(identity: Identity, method: string, path: string, body?: unknown) {
  return call(h.url, method, path, { body, headers: { [IDENTITY_HEADER]: await signIdentity(identity, h.identity.signingKey) } });
}

describe("the provider-credential routes", () => {
  it("adds, lists, disables and deletes, and never answers the key", async () => {
    const org = who("org_routes1");
    const created = await as(org, "POST", "/v1/provider-keys", { provider: "openai", api_key: "sk-route-secret-0123456789", priority: 2 });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ provider_slug: "openai", key_hint: "6789", tier: "prioritized", priority: 2, disabled: false, last_used_at: null });
    expect(JSON.stringify(created.body)).not.toContain("sk-route-secret");
    const listed = await as(org, "GET", "/v1/provider-keys");
    expect(listed.body).toEqual({ data: [created.body.data], next_cursor: null });
    const off = await as(org, "PATCH", `/v1/provider-keys/${created.body.data.id}`, { disabled: true });
    expect(off.body).toEqual({ data: { id: created.body.data.id, disabled: true } });
    expect((await as(org, "DELETE", `/v1/provider-keys/${created.body.data.id}`)).body).toEqual({ data: { deleted: true } });
    expect((await as(org, "GET", "/v1/provider-keys")).body.data).toEqual([]);
  });

  it("checks the role the identity carries: a read-only member lists but cannot add", async () => {
    const reader = who("org_routes2", "readonly");
    expect((await as(reader, "GET", "/v1/provider-keys")).status).toBe(200);
    const refused = await as(reader, "POST", "/v1/provider-keys", { provider: "openai", api_key: "sk-nope-0123456789" });
    expect(refused.status).toBe(403);
  });

  it("answers nothing without the gateway's signed identity", async () => {
    const res = await call(h.url, "GET", "/v1/provider-keys");
    expect(res.status).toBe(401);
  });

  it("keeps organisations apart: another's credential is a 404 and never listed", async () => {
    const mine = await as(who("org_a"), "POST", "/v1/provider-keys", { provider: "mistral", api_key: "mistral-key-abcdefgh" });
    const theirs = who("org_b");
    expect((await as(theirs, "GET", "/v1/provider-keys")).body.data).toEqual([]);
    expect((await as(theirs, "PATCH", `/v1/provider-keys/${mine.body.data.id}`, { disabled: true })).status).toBe(404);
    expect((await as(theirs, "DELETE", `/v1/provider-keys/${mine.body.data.id}`)).status).toBe(404);
  });

  it("names the field of a bad body", async () => {
    const res = await as(who("org_bad"), "POST", "/v1/provider-keys", { provider: "no-such-provider", api_key: "x-0123456789" });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("provider");
  });
});

/** `OrganisationCredentials` over the generated client, as the gateway calls it. */
function credentialsOf(orgId: string): Promise<consoleRpc.SealedCredential[]> {
  return new Promise((resolve, reject) =>
    h.console.inProcess.organisationCredentials({ orgId }, (err, res) => (err ? reject(err) : resolve(res.credentials))),
  );
}

describe("ConsoleService", () => {
  it("answers an organisation's enabled credentials sealed, in dispatch order, and opens with the master key", async () => {
    const org = who("org_grpc");
    const add = async (body: Record<string, unknown>) => {
      h.clock.advance(1000);
      return (await as(org, "POST", "/v1/provider-keys", { provider: "openai", ...body })).body.data.id as string;
    };
    const fallback = await add({ api_key: "k-fallback-000000", tier: "fallback" });
    const second = await add({ api_key: "k-second-00000000", priority: 2 });
    const first = await add({ api_key: "k-first-000000000", priority: 1 });
    const disabled = await add({ api_key: "k-disabled-000000" });
    await as(org, "PATCH", `/v1/provider-keys/${disabled}`, { disabled: true });
    const rows = await credentialsOf(org.orgId);
    expect(rows.map((r) => r.id)).toEqual([first, second, fallback]);
    // Sealed on the wire: the key's text is in no field the console sent.
    expect(JSON.stringify(rows, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v))).not.toContain("k-first");
    const key = rows[0]!.key!;
    const sealed = {
      ciphertext: Buffer.from(key.ciphertext),
      iv: Buffer.from(key.iv),
      tag: Buffer.from(key.tag),
      wrappedKey: Buffer.from(key.dekCiphertext),
      wrappedKeyIv: Buffer.from(key.dekIv),
      wrappedKeyTag: Buffer.from(key.dekTag),
      kekVersion: key.kekVersion,
    };
    const sealer = new ProviderCredentialSealer("console-test-master-key-0123456789");
    expect(sealer.open(sealed, providerCredentialContext(org.orgId, first))).toBe("k-first-000000000");
    expect(await credentialsOf("org_nobody")).toEqual([]);
  });

  it("records when each credential last served, never moving it backwards", async () => {
    const org = who("org_uses");
    const id = (await as(org, "POST", "/v1/provider-keys", { provider: "groq", api_key: "gsk_0123456789abcdef" })).body.data.id as string;
    const record = (at: string) =>
      new Promise<void>((resolve, reject) =>
        h.console.inProcess.recordCredentialUses({ uses: [{ credentialId: id, usedAtMs: BigInt(Date.parse(at)) }] }, (err) => (err ? reject(err) : resolve())),
      );
    await record("2026-11-21T11:00:00.000Z");
    await record("2026-11-21T09:00:00.000Z");
    const listed = await as(org, "GET", "/v1/provider-keys");
    expect(listed.body.data[0].last_used_at).toBe("2026-11-21T11:00:00.000Z");
  });
});
