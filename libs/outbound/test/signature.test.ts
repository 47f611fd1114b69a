import { createHmac } from "node:crypto";
import { newSigningSecret, signatureHeaderValue, verifySignature } from "@router/outbound";

describe("webhook signatures", () => {
  const body = '{"type":"test"}';

  it("is HMAC-SHA256 over `<t>.<raw body>` keyed with the secret", () => {
    const secret = newSigningSecret();
    const header = signatureHeaderValue(secret, body, 1_790_000_000.7);
    const expected = createHmac("sha256", secret).update(`1790000000.${body}`).digest("hex");
    expect(header).toBe(`t=1790000000,v1=${expected}`);
    expect(verifySignature(header, body, secret, { nowS: 1_790_000_010 })).toBe(true);
  });

  it("refuses another body, another secret, an old timestamp and garbage", () => {
    const secret = newSigningSecret();
    const header = signatureHeaderValue(secret, body, 1_790_000_000);
    expect(verifySignature(header, `${body} `, secret, { nowS: 1_790_000_000 })).toBe(false);
    expect(verifySignature(header, body, newSigningSecret(), { nowS: 1_790_000_000 })).toBe(false);
    expect(verifySignature(header, body, secret, { nowS: 1_790_000_301 })).toBe(false);
    expect(verifySignature("t=abc,v1=zz", body, secret, { nowS: 1_790_000_000 })).toBe(false);
    expect(verifySignature(undefined, body, secret, { nowS: 1_790_000_000 })).toBe(false);
  });

  it("mints distinct secrets with 256 bits after the prefix", () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});
