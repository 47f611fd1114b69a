import { SecretSealer } from "../src/provider-keys/sealing";

describe("secret sealing", () => {
  it("round-trips and refuses another context or another master key", () => {
    const sealer = new SecretSealer("master");
    const sealed = sealer.seal("sk-live-123", "org_a/pk_1");
    expect(sealer.open(sealed, "org_a/pk_1")).toBe("sk-live-123");
    expect(() => sealer.open(sealed, "org_b/pk_1")).toThrow();
    expect(() => new SecretSealer("other").open(sealed, "org_a/pk_1")).toThrow();
  });

  it("uses a fresh data key and iv per secret", () => {
    const sealer = new SecretSealer("master");
    const a = sealer.seal("same", "c");
    const b = sealer.seal("same", "c");
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
  });
});
