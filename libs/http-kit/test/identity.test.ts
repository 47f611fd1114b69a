import { DomainError } from "@router/errors";
import { signIdentity, verifyIdentity, type Identity } from "@router/http-kit";

const SECRET = "internal-secret";
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
    const header = await signIdentity(identity, SECRET, NOW);
    expect(await verifyIdentity(header, SECRET, NOW)).toEqual(identity);
  });

  it("accepts a header up to 60 seconds old", async () => {
    const header = await signIdentity(identity, SECRET, NOW);
    expect(await verifyIdentity(header, SECRET, NOW + 60_000)).toEqual(identity);
  });

  it("refuses a header older than 60 seconds as stale", async () => {
    const header = await signIdentity(identity, SECRET, NOW);
    const err = await rejection(verifyIdentity(header, SECRET, NOW + 61_000));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(err.message).toMatch(/stale/);
  });

  it("accepts a header stamped a few seconds ahead (another replica's clock), and refuses one further ahead", async () => {
    expect(await verifyIdentity(await signIdentity(identity, SECRET, NOW + 5_000), SECRET, NOW)).toEqual(identity);
    const err = await rejection(verifyIdentity(await signIdentity(identity, SECRET, NOW + 6_000), SECRET, NOW));
    expect(err).toMatchObject({ status: 401, message: expect.stringMatching(/stale/) as unknown });
  });

  it("refuses a header signed with another secret", async () => {
    const header = await signIdentity(identity, "another-secret", NOW);
    const err = await rejection(verifyIdentity(header, SECRET, NOW));
    expect(err).toMatchObject({ status: 401, code: "unauthorized", message: "invalid identity context" });
  });

  it("refuses a payload changed after signing (an escalated role)", async () => {
    const [head, payload, mac] = partsOf(await signIdentity(identity, SECRET, NOW));
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { identity: Identity };
    claims.identity = { ...claims.identity, role: "owner", operator: true };
    const forged = Buffer.from(JSON.stringify(claims)).toString("base64url");
    expect((await rejection(verifyIdentity(`${head}.${forged}.${mac}`, SECRET, NOW))).status).toBe(401);
  });

  it("refuses a forged signature of the right length", async () => {
    const [head, payload, mac] = partsOf(await signIdentity(identity, SECRET, NOW));
    const flipped = Buffer.from(mac, "base64url");
    flipped[0] = flipped[0]! ^ 0xff;
    expect((await rejection(verifyIdentity(`${head}.${payload}.${flipped.toString("base64url")}`, SECRET, NOW))).status).toBe(401);
  });

  it("refuses an unsigned token (alg none)", async () => {
    const [, payload] = partsOf(await signIdentity(identity, SECRET, NOW));
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    expect((await rejection(verifyIdentity(`${none}.${payload}.`, SECRET, NOW))).status).toBe(401);
  });

  it("refuses a header with the signature cut off", async () => {
    const [head, payload] = partsOf(await signIdentity(identity, SECRET, NOW));
    expect((await rejection(verifyIdentity(`${head}.${payload}`, SECRET, NOW))).status).toBe(401);
    expect((await rejection(verifyIdentity(`${head}.${payload}.`, SECRET, NOW))).status).toBe(401);
  });

  it.each([[undefined], [""]])("refuses a missing header (%p)", async (header) => {
    const err = await rejection(verifyIdentity(header, SECRET, NOW));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(err.message).toMatch(/missing/);
  });

  it("carries the org and role the gateway authenticated", async () => {
    const admin = { ...identity, role: "owner" as const, credential: "session" as const, keyHash: null };
    expect(await verifyIdentity(await signIdentity(admin, SECRET, NOW), SECRET, NOW)).toEqual(admin);
  });

  it("stamps the current time when none is given", async () => {
    const header = await signIdentity(identity, SECRET);
    expect(await verifyIdentity(header, SECRET)).toEqual(identity);
    await expect(verifyIdentity(header, SECRET, Date.now() + 120_000)).rejects.toThrow(DomainError);
  });
});
