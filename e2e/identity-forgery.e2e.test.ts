import { SignJWT } from "jose";
import { parseIdentitySigningKey } from "@router/config";
import { IDENTITY_HEADER, identitySigningKey, signIdentity, type Identity, type IdentitySigningKey } from "@router/http-kit";
import { newIdentityKeys, startFakeOpenAi, startStack, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * Each internal service trusts an identity only when the edge's private key signed it. Against the
 * separate-process stack (the gateway alone holds the signing key, every other service only the
 * public set), a caller that reaches an internal port directly and signs with any other Ed25519
 * key, or with the old shared-secret HS256 scheme, is refused by every service (the console's credential routes too); the same identity
 * signed with the edge's key is accepted, so the refusals are the signature's doing.
 */
describe("an identity not signed by the edge's key", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let identity: Identity;
  let edgeKey: IdentitySigningKey;
  /** One route behind the identity check on each internal service's HTTP port. */
  let guarded: Array<{ service: string; url: string }>;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
    const org = await stack.createOrg("Forgery Target Co");
    identity = { orgId: org.orgId, credential: "management", keyHash: null, keyName: null, workspaceId: null, role: "owner", userId: null, operator: false };
    edgeKey = identitySigningKey(parseIdentitySigningKey(stack.gatewayEnv.ROUTER_IDENTITY_SIGNING_KEY ?? ""));
    const e = stack.env;
    guarded = [
      { service: "routing", url: `${e.ROUTING_HTTP_URL}/v1/presets` },
      { service: "ledger", url: `${e.LEDGER_HTTP_URL}/v1/agents` },
      { service: "activity", url: `${e.ACTIVITY_HTTP_URL}/v1/activity` },
      { service: "reports", url: `${e.REPORTS_HTTP_URL}/v1/reports/branding` },
      { service: "alerts", url: `${e.ALERTS_HTTP_URL}/v1/alerts/channels` },
      { service: "broadcast", url: `${e.BROADCAST_HTTP_URL}/v1/broadcast/destinations` },
      { service: "runaway", url: `${e.RUNAWAY_HTTP_URL}/v1/alerts/settings` },
      { service: "console", url: `${e.CONSOLE_HTTP_URL}/v1/provider-keys` },
    ];
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  const statusWith = async (url: string, token: string): Promise<{ status: number; message?: string }> => {
    const res = await fetch(url, { headers: { [IDENTITY_HEADER]: token } });
    const body = (await res.json()) as { error?: { message?: string } };
    return { status: res.status, message: body.error?.message };
  };

  it("leaves the signing key out of every internal service's environment", () => {
    expect(stack.env.ROUTER_IDENTITY_SIGNING_KEY).toBeUndefined();
    expect(stack.env.ROUTER_INTERNAL_SECRET).toBeUndefined();
    expect(stack.env.ROUTER_IDENTITY_PUBLIC_KEYS).toContain(edgeKey.kid);
  });

  it("is refused with 401 by every internal service, signed by another Ed25519 key", async () => {
    const forger = newIdentityKeys().signingKey;
    // Another key, and another key passing itself off under the edge key's kid.
    for (const key of [forger, { ...forger, kid: edgeKey.kid }]) {
      const token = await signIdentity(identity, key);
      for (const { service, url } of guarded) {
        expect({ service, kid: key.kid, ...(await statusWith(url, token)) }).toEqual({ service, kid: key.kid, status: 401, message: "invalid identity context" });
      }
    }
  });

  it("is refused with 401 by every internal service, as an HS256 token of the old shared-secret scheme", async () => {
    const token = await new SignJWT({ identity })
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: edgeKey.kid })
      .setIssuer("router-gateway")
      .setAudience("router-internal")
      .setIssuedAt()
      .sign(new TextEncoder().encode("a-secret-every-service-used-to-hold"));
    for (const { service, url } of guarded) {
      expect({ service, ...(await statusWith(url, token)) }).toEqual({ service, status: 401, message: "invalid identity context" });
    }
  });

  it("is accepted by every internal service when the edge's key signed the same identity", async () => {
    const token = await signIdentity(identity, edgeKey);
    for (const { service, url } of guarded) {
      const { status } = await statusWith(url, token);
      expect({ service, status }).toEqual({ service, status: 200 });
    }
  });
});
