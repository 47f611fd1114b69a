import type { IncomingMessage } from "node:http";
import { addressSubject, clientAddress, trustedProxies } from "../src/rate-limits/client-address";

/** A request as Node hands it over: the socket's peer and, maybe, an X-Forwarded-For header. */
function request(remoteAddress: string | undefined, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor };
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

describe("clientAddress", () => {
  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    const none = trustedProxies([]);
    expect(clientAddress(request("203.0.113.9"), none)).toBe("203.0.113.9");
    expect(clientAddress(request("203.0.113.9", "198.51.100.1"), none)).toBe("203.0.113.9");
    expect(clientAddress(request("127.0.0.1", "198.51.100.1"), none)).toBe("127.0.0.1");
  });

  it("reads X-Forwarded-For when the peer is a trusted proxy", () => {
    const trust = trustedProxies(["10.0.0.0/8"]);
    expect(clientAddress(request("10.1.2.3", "198.51.100.1"), trust)).toBe("198.51.100.1");
    // A peer outside the list is the client, header or not.
    expect(clientAddress(request("192.0.2.7", "198.51.100.1"), trust)).toBe("192.0.2.7");
    // No header behind a trusted proxy: the proxy is all there is.
    expect(clientAddress(request("10.1.2.3"), trust)).toBe("10.1.2.3");
  });

  it("takes the first untrusted hop from the right, so a client cannot choose its address", () => {
    const trust = trustedProxies(["10.0.0.0/8"]);
    // The client sent "1.1.1.1" itself; the proxy appended the address it saw.
    expect(clientAddress(request("10.0.0.2", "1.1.1.1, 198.51.100.1"), trust)).toBe("198.51.100.1");
    // Two trusted proxies in a row are both skipped.
    expect(clientAddress(request("10.0.0.2", "1.1.1.1, 198.51.100.1, 10.9.9.9"), trust)).toBe("198.51.100.1");
  });

  it("accepts single addresses, CIDRs of both families and proxy-addr's names", () => {
    expect(clientAddress(request("192.0.2.10", "198.51.100.1"), trustedProxies(["192.0.2.10"]))).toBe("198.51.100.1");
    expect(clientAddress(request("::1", "198.51.100.1"), trustedProxies(["loopback"]))).toBe("198.51.100.1");
    expect(clientAddress(request("fd00::5", "2001:db8::1"), trustedProxies(["fd00::/8"]))).toBe("2001:db8::1");
  });

  it("refuses what is not an address or CIDR", () => {
    expect(() => trustedProxies(["not-an-address"])).toThrow(TypeError);
    expect(() => trustedProxies(["10.0.0.0/40"])).toThrow(TypeError);
  });

  it("answers `unknown` for a socket already gone", () => {
    expect(clientAddress(request(undefined), trustedProxies([]))).toBe("unknown");
  });
});

describe("addressSubject", () => {
  it("counts IPv4 as it is, also when written IPv4-mapped", () => {
    expect(addressSubject("198.51.100.1")).toBe("198.51.100.1");
    expect(addressSubject("::ffff:198.51.100.1")).toBe("198.51.100.1");
  });

  it("counts IPv6 by its /64 network", () => {
    expect(addressSubject("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressSubject("2001:db8:1:2::99")).toBe(addressSubject("2001:db8:1:2:ffff::1"));
    expect(addressSubject("2001:db8:1:3::1")).not.toBe(addressSubject("2001:db8:1:2::1"));
    expect(addressSubject("::1")).toBe("::/64");
  });

  it("keeps anything unparsable as it is", () => {
    expect(addressSubject("unknown")).toBe("unknown");
  });
});
