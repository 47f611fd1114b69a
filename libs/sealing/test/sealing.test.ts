import { packSealed, SecretSealer, unpackSealed } from "@router/sealing";

const PURPOSE = { salt: "router-test", info: "things/kek/v1" };

describe("secret sealing", () => {
  it("round-trips and refuses another context or another master key", () => {
    const sealer = new SecretSealer("master", PURPOSE);
    const sealed = sealer.seal("sk-live-123", "org_a/pk_1");
    expect(sealer.open(sealed, "org_a/pk_1")).toBe("sk-live-123");
    expect(() => sealer.open(sealed, "org_b/pk_1")).toThrow();
    expect(() => new SecretSealer("other", PURPOSE).open(sealed, "org_a/pk_1")).toThrow();
  });

  it("refuses a row sealed for another purpose under the same master key", () => {
    const sealed = new SecretSealer("master", PURPOSE).seal("whsec_1", "org_a/ch_1");
    expect(() => new SecretSealer("master", { salt: "router-test", info: "other/kek/v1" }).open(sealed, "org_a/ch_1")).toThrow();
  });

  it("uses a fresh data key and iv per secret", () => {
    const sealer = new SecretSealer("master", PURPOSE);
    const a = sealer.seal("same", "c");
    const b = sealer.seal("same", "c");
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
  });
});

describe("packed sealed secrets", () => {
  it("round-trip through one text value and still open", () => {
    const sealer = new SecretSealer("master", PURPOSE);
    const packed = packSealed(sealer.seal("whsec_abc", "org_a/ch_1"));
    expect(packed).toMatch(/^v1(\.[A-Za-z0-9_-]+){6}$/);
    expect(sealer.open(unpackSealed(packed), "org_a/ch_1")).toBe("whsec_abc");
  });

  it("refuses text that is not a packed secret", () => {
    expect(() => unpackSealed("whsec_plain")).toThrow("not a packed sealed secret");
  });
});
