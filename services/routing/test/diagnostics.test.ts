import { IDENTITY_HEADER, signIdentity, type Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { fixtureCatalog } from "./catalog-fixture";
import { startHarness, type Harness } from "./routing-harness";

const KEYS = newIdentityKeys();

function identity(operator: boolean): Identity {
  return {
    orgId: "org_diag",
    credential: "management",
    keyHash: "b".repeat(64),
    keyName: "mgmt",
    workspaceId: null,
    role: "owner",
    userId: null,
    operator,
  };
}

describe("GET /internal/diagnostics", () => {
  let h: Harness;
  beforeAll(async () => {
    // A refresh every hour: the snapshot's age is moved only by the test's clock.
    h = await startHarness({ catalog: fixtureCatalog(), identityKeys: KEYS.publicKeys, healthRefreshMs: 3_600_000 });
  });
  afterAll(async () => {
    await h.close();
  });

  async function diagnostics(id: Identity | null) {
    const headers: Record<string, string> = id ? { [IDENTITY_HEADER]: await signIdentity(id, KEYS.signingKey) } : {};
    const res = await fetch(`${h.baseUrl}/internal/diagnostics`, { headers });
    return { status: res.status, body: (await res.json()) as any };
  }

  it("reports the age of the endpoint health snapshot on the service's clock to an operator", async () => {
    const before = await diagnostics(identity(true));
    expect(before.status).toBe(200);
    h.clock.advance(4_000);
    const after = await diagnostics(identity(true));
    expect(after.body.endpoint_health_age_ms).toBe(before.body.endpoint_health_age_ms + 4_000);
  });

  it("counts the guardrails and catalog caches Plan reads from", async () => {
    const before = (await diagnostics(identity(true))).body.caches;
    expect(before.catalog.size).toBeGreaterThan(0);
    expect(before.catalog.misses).toBeGreaterThanOrEqual(1);
    await h.plan({ orgId: "org_diag_new", model: "acme/one", byokProviders: ["alpha"], keyHash: "b".repeat(64) });
    await h.plan({ orgId: "org_diag_new", model: "acme/one", byokProviders: ["alpha"], keyHash: "b".repeat(64) });
    const after = (await diagnostics(identity(true))).body.caches;
    // The first Plan of an organisation reads its guardrails; the second is served from memory.
    expect(after.guardrails.misses).toBe(before.guardrails.misses + 1);
    expect(after.guardrails.hits).toBeGreaterThan(before.guardrails.hits);
    expect(after.guardrails.size).toBe(before.guardrails.size + 1);
    expect(after.catalog.hits + after.catalog.stale).toBeGreaterThanOrEqual(before.catalog.hits + before.catalog.stale + 2);
  });

  it("is not found for a non-operator identity and refused without one", async () => {
    expect((await diagnostics(identity(false))).status).toBe(404);
    expect((await diagnostics(null)).status).toBe(401);
  });
});
