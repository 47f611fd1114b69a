import { createHmac } from "node:crypto";
import { hashKey, keyClassOf, mintKey } from "../src";
import { randomBase62, randomId } from "@router/random-tokens";

describe("key secrets", () => {
  it("mints 256-bit base62 secrets with the class prefix and a hash that depends on the pepper", () => {
    const a = mintKey("inference", "pepper-a");
    expect(a.plaintext).toMatch(/^rt-v1-[0-9A-Za-z]{43}$/);
    expect(a.hash).toBe(hashKey(a.plaintext, "pepper-a"));
    expect(hashKey(a.plaintext, "pepper-b")).not.toBe(a.hash);
    expect(mintKey("management", "p").plaintext).toMatch(/^rt-mgmt-[0-9A-Za-z]{43}$/);
    expect(new Set(Array.from({ length: 200 }, () => mintKey("inference", "p").plaintext)).size).toBe(200);
  });

  it("hashes as HMAC-SHA256 under the pepper, whichever pepper came before (stored hashes stay valid)", () => {
    // RFC 4231, test case 2.
    const vector = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    expect(hashKey("what do ya want for nothing?", "Jefe")).toBe(vector);
    expect(hashKey("what do ya want for nothing?", "pepper-b")).not.toBe(vector);
    expect(hashKey("what do ya want for nothing?", "Jefe")).toBe(vector);
    // A pepper beyond ASCII is taken as UTF-8, as a string given to createHmac is.
    expect(hashKey("k", "péppér")).toBe(createHmac("sha256", Buffer.from("péppér", "utf8")).update("k").digest("hex"));
  });

  it("recognises only the forms the gateway mints", () => {
    expect(keyClassOf(mintKey("inference", "p").plaintext)).toBe("inference");
    expect(keyClassOf(mintKey("management", "p").plaintext)).toBe("management");
    expect(keyClassOf(`rt-v2-${"a".repeat(43)}`)).toBeNull();
    expect(keyClassOf(`rt-v1-${"a".repeat(42)}`)).toBeNull();
    expect(keyClassOf(`rt-v1-${"a".repeat(42)}-`)).toBeNull();
  });

  it("pads base62 tokens to a fixed width", () => {
    for (let i = 0; i < 50; i++) expect(randomBase62(32)).toHaveLength(43);
  });

  it("cuts ids from the random pool without handing out a byte twice, across refills", () => {
    const ids = Array.from({ length: 1_000 }, () => randomId(16, "hex"));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    // 16 000 bytes: the 4 KiB pool was refilled three times; no id repeats a slice of another.
    const joined = ids.join("");
    for (const id of ids.slice(0, 50)) expect(joined.indexOf(id)).toBe(joined.lastIndexOf(id));
    expect(randomId(12, "base64url")).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(randomId(5_000, "hex")).toHaveLength(10_000);
  });
});
