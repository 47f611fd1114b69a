import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";
import proxyaddr from "proxy-addr";

/** Whether the hop at `addr` (the `i`-th from the socket) is a proxy this gateway trusts. */
export type TrustProxy = (addr: string, i: number) => boolean;

const trustNothing: TrustProxy = () => false;

/**
 * The trust function of `GATEWAY_TRUSTED_PROXIES`: addresses and CIDRs (`10.0.0.0/8`,
 * `fd00::/8`), or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`. Empty: trust nothing.
 * Throws a TypeError naming a bad entry.
 */
export function trustedProxies(list: readonly string[]): TrustProxy {
  return list.length === 0 ? trustNothing : proxyaddr.compile([...list]);
}

/**
 * The address of the client that sent `req`: the socket's peer, unless that peer is a trusted
 * proxy, in which case `X-Forwarded-For` is read from the right, skipping trusted proxies, and the
 * first untrusted hop is the client (so a client cannot choose its address by sending the header).
 * This is express's `trust proxy` rule (proxy-addr), without changing how express reads the
 * request's protocol and host.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  // proxy-addr returns the socket's address when nothing is trusted; a socket already closed has none.
  const addr = (proxyaddr(req, trust) as string | undefined) ?? "";
  return addr === "" ? "unknown" : addr;
}

/**
 * The counting subject of an address: an IPv4 address as it is (also when written IPv4-mapped,
 * `::ffff:1.2.3.4`), an IPv6 address by its /64 network (one subscriber usually holds a whole /64,
 * so counting single addresses would let a client rotate through them), anything unparsable as it is.
 */
export function addressSubject(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address); // IPv4-mapped IPv6 becomes IPv4
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
