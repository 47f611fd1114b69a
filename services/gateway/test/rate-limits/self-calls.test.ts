import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { ManualClock } from "@router/money";
import { SELF_CALL_HEADER, SELF_CALL_TTL_MS, SelfCallTokens } from "../../src/rate-limits/self-calls";

const secret = randomBytes(32).toString("base64url");
const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
/** The gateway that forwarded /mcp, and another replica the tool's call reached. */
const issuer = new SelfCallTokens(secret, clock);
const replica = new SelfCallTokens(secret, clock);

/** Signs a payload as the format says, with a key derived here independently: HKDF-SHA256, empty salt, info "router self-call". */
function signAs(payload: string, ikm: string = secret, info = "router self-call"): string {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(ikm, "utf8"), Buffer.alloc(0), info, 32));
  return `${payload}.${createHmac("sha256", key).update(payload).digest("base64url")}`;
}
const encode = (claims: unknown): string => Buffer.from(JSON.stringify(claims)).toString("base64url");
const request = (headers: IncomingMessage["headers"]): IncomingMessage => ({ headers }) as IncomingMessage;

describe("self-call tokens", () => {
  it("are <base64url JSON {addr, exp}>.<HMAC-SHA256 under the HKDF key>, and any replica with the secret reads the address", () => {
    const token = issuer.issue("203.0.113.9");
    const [payload, signature] = token.split(".");
    expect(JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"))).toEqual({
      addr: "203.0.113.9",
      exp: clock.now().getTime() + SELF_CALL_TTL_MS,
    });
    expect(signAs(payload ?? "")).toBe(token);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(replica.verify(token)).toBe("203.0.113.9");
    expect(replica.clientOf(request({ [SELF_CALL_HEADER]: token }))).toBe("203.0.113.9");
    // IPv6 addresses, as the per-address limits see them, go through unchanged.
    expect(replica.verify(issuer.issue("2001:db8::1"))).toBe("2001:db8::1");
  });

  it("count for nothing once expired (two minutes)", () => {
    const local = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
    const tokens = new SelfCallTokens(secret, local);
    const token = tokens.issue("203.0.113.9");
    local.advance(SELF_CALL_TTL_MS - 1);
    expect(tokens.verify(token)).toBe("203.0.113.9");
    local.advance(1);
    expect(tokens.verify(token)).toBeUndefined();
  });

  it("count for nothing when forged: another secret, the raw secret as the key, another HKDF info", () => {
    const payload = encode({ addr: "203.0.113.9", exp: clock.now().getTime() + 60_000 });
    expect(replica.verify(new SelfCallTokens(randomBytes(32).toString("base64url"), clock).issue("203.0.113.9"))).toBeUndefined();
    expect(replica.verify(`${payload}.${createHmac("sha256", secret).update(payload).digest("base64url")}`)).toBeUndefined();
    expect(replica.verify(signAs(payload, secret, "router csrf"))).toBeUndefined();
    // The same payload signed as the format says is taken: the refusals above are the signatures'.
    expect(replica.verify(signAs(payload))).toBe("203.0.113.9");
  });

  it("count for nothing when tampered with: another address or a later expiry under the old signature, a changed signature", () => {
    const token = issuer.issue("203.0.113.9");
    const [, signature = ""] = token.split(".");
    expect(replica.verify(`${encode({ addr: "198.51.100.1", exp: clock.now().getTime() + SELF_CALL_TTL_MS })}.${signature}`)).toBeUndefined();
    expect(replica.verify(`${encode({ addr: "203.0.113.9", exp: clock.now().getTime() + 10 * SELF_CALL_TTL_MS })}.${signature}`)).toBeUndefined();
    const flipped = `${signature.slice(0, 10)}${signature[10] === "A" ? "B" : "A"}${signature.slice(11)}`;
    expect(replica.verify(token.replace(signature, flipped))).toBeUndefined();
    // The signature's last character carries two unused bits: another spelling of the same bytes is not taken.
    const last = signature.at(-1) ?? "A";
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sameBytes = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)] ?? "A";
    expect(Buffer.from(signature.slice(0, -1) + sameBytes, "base64url").equals(Buffer.from(signature, "base64url"))).toBe(true);
    expect(replica.verify(token.replace(signature, signature.slice(0, -1) + sameBytes))).toBeUndefined();
    expect(replica.verify(`${token}.extra`)).toBeUndefined();
    expect(replica.verify(`${token}=`)).toBeUndefined();
  });

  it("count for nothing when malformed, even when signed: not JSON, other claims, a wrong type", () => {
    const exp = clock.now().getTime() + 60_000;
    for (const token of [
      "",
      ".",
      "garbage",
      "x".repeat(10_000),
      signAs(Buffer.from("not json").toString("base64url")),
      signAs(encode({ addr: "203.0.113.9" })),
      signAs(encode({ addr: 5, exp })),
      signAs(encode({ addr: "", exp })),
      signAs(encode({ addr: "203.0.113.9", exp: String(exp) })),
      signAs(encode({ addr: "203.0.113.9", exp, admin: true })),
      signAs(encode(["203.0.113.9", exp])),
    ]) {
      expect(replica.verify(token)).toBeUndefined();
    }
  });

  it("are read from the header only, as one value", () => {
    const token = issuer.issue("203.0.113.9");
    expect(replica.clientOf(request({}))).toBeUndefined();
    expect(replica.clientOf(request({ authorization: token }))).toBeUndefined();
    expect(replica.clientOf(request({ [SELF_CALL_HEADER]: [token, token] as unknown as string }))).toBeUndefined();
  });
});
