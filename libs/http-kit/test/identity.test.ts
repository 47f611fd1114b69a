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

function rejection(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

describe("signIdentity / verifyIdentity", () => {
  it("round trips the identity without the signing time", () => {
    const header = signIdentity(identity, SECRET, NOW);
    expect(verifyIdentity(header, SECRET, NOW)).toEqual(identity);
  });

  it("accepts a header up to 60 seconds old", () => {
    const header = signIdentity(identity, SECRET, NOW);
    expect(verifyIdentity(header, SECRET, NOW + 60_000)).toEqual(identity);
  });

  it("refuses a header older than 60 seconds as stale", () => {
    const header = signIdentity(identity, SECRET, NOW);
    const err = rejection(() => verifyIdentity(header, SECRET, NOW + 60_001));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(err.message).toMatch(/stale/);
  });

  it("refuses a header stamped more than 60 seconds in the future", () => {
    const header = signIdentity(identity, SECRET, NOW + 61_000);
    expect(rejection(() => verifyIdentity(header, SECRET, NOW)).status).toBe(401);
  });

  it("refuses a header signed with another secret", () => {
    const header = signIdentity(identity, "another-secret", NOW);
    const err = rejection(() => verifyIdentity(header, SECRET, NOW));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("refuses a payload changed after signing (an escalated role)", () => {
    const header = signIdentity(identity, SECRET, NOW);
    const [, mac] = header.split(".");
    const forged = Buffer.from(JSON.stringify({ ...identity, role: "owner", operator: true, iat: NOW })).toString(
      "base64url",
    );
    expect(rejection(() => verifyIdentity(`${forged}.${mac}`, SECRET, NOW)).status).toBe(401);
  });

  it("refuses a forged mac of the right length", () => {
    const header = signIdentity(identity, SECRET, NOW);
    const [payload, mac] = header.split(".");
    const flipped = Buffer.from(mac!, "base64url");
    flipped[0] = flipped[0]! ^ 0xff;
    expect(rejection(() => verifyIdentity(`${payload}.${flipped.toString("base64url")}`, SECRET, NOW)).status).toBe(
      401,
    );
  });

  it("refuses a header with the mac cut off", () => {
    const [payload] = signIdentity(identity, SECRET, NOW).split(".");
    expect(rejection(() => verifyIdentity(payload, SECRET, NOW)).status).toBe(401);
    expect(rejection(() => verifyIdentity(`${payload}.`, SECRET, NOW)).status).toBe(401);
  });

  it.each([[undefined], [""]])("refuses a missing header (%p)", (header) => {
    const err = rejection(() => verifyIdentity(header, SECRET, NOW));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(err.message).toMatch(/missing/);
  });

  it("carries the org and role the gateway authenticated", () => {
    const admin = { ...identity, role: "owner" as const, credential: "session" as const, keyHash: null };
    expect(verifyIdentity(signIdentity(admin, SECRET, NOW), SECRET, NOW)).toEqual(admin);
  });

  it("stamps the current time when none is given", () => {
    const header = signIdentity(identity, SECRET);
    expect(verifyIdentity(header, SECRET)).toEqual(identity);
    expect(() => verifyIdentity(header, SECRET, Date.now() + 120_000)).toThrow(DomainError);
  });
});
