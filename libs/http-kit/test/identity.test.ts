import { SignJWT } from "jose";
import { generateIdentityKeyPair, type IdentityPrivateJwk } from "@router/config";
import { DomainError } from "@router/errors";
import { identityPublicKeys, identitySigningKey, signIdentity, verifyIdentity, type Identity, type IdentitySigningKey } from "@router/http-kit";

/** The edge's pair: SIGNER signs as the gateway does, KEYS is the set the services verify with. */
const edge = generateIdentityKeyPair();
const SIGNER = identitySigningKey(edge.signingKey);
const KEYS = identityPublicKeys(edge.publicKeys);
/** A well-formed Ed25519 key the services were never given. */
const stranger = generateIdentityKeyPair();
const NOW = Date.parse("2026-05-01T12:00:00.000Z");

const identity: Identity = {
  orgId: "org_abc",
  credential: "inference",
  keyHash: "3f2a",
  keyName: "prod",
  workspaceId: "ws_1",
  role: "member",
  userId: "user_9",
  operator: false,
};

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

/** A JWT's three parts: header, payload and signature (base64url). */
const partsOf = (token: string): [string, string, string] => {
  const [h, p, s] = token.split(".");
  return [h!, p!, s!];
};

describe("signIdentity / verifyIdentity", () => {
  it("round trips the identity", async () => {
    const header = await signIdentity(identity, SIGNER, NOW);
    expect(await verifyIdentity(header, KEYS, NOW)).toEqual(identity);
  });

  it("accepts a header up to 60 seconds old", async () => {
    const header = await signIdentity(identity, SIGNER, NOW);
    expect(await verifyIdentity(header, KEYS, NOW + 60_000)).toEqual(identity);
  });

  it("refuses a header older than 60 seconds as stale", async () => {
    const header = await signIdentity(identity, SIGNER, NOW);
    const err = await rejection(verifyIdentity(header, KEYS, NOW + 61_000));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(err.message).toMatch(/stale/);
  });

  it("accepts a header stamped a few seconds ahead (another replica's clock), and refuses one further ahead", async () => {
    expect(await verifyIdentity(await signIdentity(identity, SIGNER, NOW + 5_000), KEYS, NOW)).toEqual(identity);
    const err = await rejection(verifyIdentity(await signIdentity(identity, SIGNER, NOW + 6_000), KEYS, NOW));
    expect(err).toMatchObject({ status: 401, message: expect.stringMatching(/stale/) as unknown });
  });

  it("names its key and algorithm in the header", async () => {
    const [head] = partsOf(await signIdentity(identity, SIGNER, NOW));
    expect(JSON.parse(Buffer.from(head, "base64url").toString("utf8"))).toEqual({ alg: "EdDSA", typ: "JWT", kid: edge.signingKey.kid });
  });

  it("refuses a header signed by an Ed25519 key that is not in the set", async () => {
    const header = await signIdentity(identity, identitySigningKey(stranger.signingKey), NOW);
    const err = await rejection(verifyIdentity(header, KEYS, NOW));
    expect(err).toMatchObject({ status: 401, code: "unauthorized", message: "invalid identity context" });
  });

  it("refuses another key's signature that claims the edge key's kid", async () => {
    const impostor: IdentitySigningKey = { ...identitySigningKey(stranger.signingKey), kid: edge.signingKey.kid };
    const err = await rejection(verifyIdentity(await signIdentity(identity, impostor, NOW), KEYS, NOW));
    expect(err).toMatchObject({ status: 401, message: "invalid identity context" });
  });

  it("refuses the edge key's signature under a kid the set does not hold", async () => {
    const renamed: IdentitySigningKey = { ...SIGNER, kid: "retired-or-unknown" };
    const err = await rejection(verifyIdentity(await signIdentity(identity, renamed, NOW), KEYS, NOW));
    expect(err).toMatchObject({ status: 401, message: "invalid identity context" });
  });

  it("refuses a token that names no kid, even signed by the edge key", async () => {
    const token = await new SignJWT({ identity })
      .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
      .setIssuer("router-gateway")
      .setAudience("router-internal")
      .setIssuedAt(Math.floor(NOW / 1000))
      .sign(SIGNER.key);
    expect((await rejection(verifyIdentity(token, KEYS, NOW))).message).toBe("invalid identity context");
  });

  it("refuses an HS256 token, whatever its secret and kid", async () => {
    // The old scheme's token (a shared ROUTER_INTERNAL_SECRET), and one keyed with the public key's
    // own bytes: the algorithm confusion a verifier that trusted the header would fall for.
    for (const secret of [Buffer.from("the-old-internal-secret"), Buffer.from(edge.signingKey.x, "base64url")]) {
      const token = await new SignJWT({ identity })
        .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: edge.signingKey.kid })
        .setIssuer("router-gateway")
        .setAudience("router-internal")
        .setIssuedAt(Math.floor(NOW / 1000))
        .sign(secret);
      const err = await rejection(verifyIdentity(token, KEYS, NOW));
      expect(err).toMatchObject({ status: 401, message: "invalid identity context" });
    }
  });

  it("accepts every key of a rotated set, each by its kid", async () => {
    const next = generateIdentityKeyPair();
    const both = identityPublicKeys({ keys: [...edge.publicKeys.keys, ...next.publicKeys.keys] });
    expect(both.kids).toEqual([edge.signingKey.kid, next.signingKey.kid]);
    expect(await verifyIdentity(await signIdentity(identity, SIGNER, NOW), both, NOW)).toEqual(identity);
    expect(await verifyIdentity(await signIdentity(identity, identitySigningKey(next.signingKey), NOW), both, NOW)).toEqual(identity);
    // Once the old key is dropped from the set, its tokens are refused.
    const old = await signIdentity(identity, SIGNER, NOW);
    expect((await rejection(verifyIdentity(old, identityPublicKeys(next.publicKeys), NOW))).status).toBe(401);
  });

  it("refuses to build a public set that holds a private key, or a key without kid", () => {
    const withPrivate = { ...edge.signingKey } as IdentityPrivateJwk;
    expect(() => identityPublicKeys({ keys: [withPrivate] })).toThrow(/private/);
    const { kid: _kid, ...noKid } = edge.publicKeys.keys[0]!;
    expect(() => identityPublicKeys({ keys: [noKid] })).toThrow(/kid/);
  });

  it("refuses a payload changed after signing (an escalated role)", async () => {
    const [head, payload, mac] = partsOf(await signIdentity(identity, SIGNER, NOW));
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { identity: Identity };
    claims.identity = { ...claims.identity, role: "owner", operator: true };
    const forged = Buffer.from(JSON.stringify(claims)).toString("base64url");
    expect((await rejection(verifyIdentity(`${head}.${forged}.${mac}`, KEYS, NOW))).status).toBe(401);
  });

  it("refuses a forged signature of the right length", async () => {
    const [head, payload, mac] = partsOf(await signIdentity(identity, SIGNER, NOW));
    const flipped = Buffer.from(mac, "base64url");
    flipped[0] = flipped[0]! ^ 0xff;
    expect((await rejection(verifyIdentity(`${head}.${payload}.${flipped.toString("base64url")}`, KEYS, NOW))).status).toBe(401);
  });

  it("refuses an unsigned token (alg none)", async () => {
    const [, payload] = partsOf(await signIdentity(identity, SIGNER, NOW));
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    expect((await rejection(verifyIdentity(`${none}.${payload}.`, KEYS, NOW))).status).toBe(401);
  });

  it("refuses a header with the signature cut off", async () => {
    const [head, payload] = partsOf(await signIdentity(identity, SIGNER, NOW));
    expect((await rejection(verifyIdentity(`${head}.${payload}`, KEYS, NOW))).status).toBe(401);
    expect((await rejection(verifyIdentity(`${head}.${payload}.`, KEYS, NOW))).status).toBe(401);
  });

  it.each([[undefined], [""]])("refuses a missing header (%p)", async (header) => {
    const err = await rejection(verifyIdentity(header, KEYS, NOW));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(err.message).toMatch(/missing/);
  });

  it("carries the org and role the gateway authenticated", async () => {
    const admin = { ...identity, role: "owner" as const, credential: "session" as const, keyHash: null };
    expect(await verifyIdentity(await signIdentity(admin, SIGNER, NOW), KEYS, NOW)).toEqual(admin);
  });

  it("stamps the current time when none is given", async () => {
    const header = await signIdentity(identity, SIGNER);
    expect(await verifyIdentity(header, KEYS)).toEqual(identity);
    await expect(verifyIdentity(header, KEYS, Date.now() + 120_000)).rejects.toThrow(DomainError);
  });
});
