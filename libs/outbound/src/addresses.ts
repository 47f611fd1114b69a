import ipaddr from "ipaddr.js";

/**
 * The range ipaddr.js names for an address, with IPv4-mapped IPv6 (`::ffff:127.0.0.1`) unwrapped
 * first so it is judged as the IPv4 address it reaches. `unicast` is the only public range; every
 * other one (loopback, private, linkLocal with 169.254.169.254, uniqueLocal, unspecified,
 * multicast, carrierGradeNat, reserved, benchmarking, 6to4, teredo, NAT64 ...) is refused.
 */
export function addressRange(address: string): string {
  return ipaddr.process(stripBrackets(address)).range();
}

/** Whether deliveries may reach `address`: a public unicast address. */
export function isPublicAddress(address: string): boolean {
  return addressRange(address) === "unicast";
}

/** Whether `text` is an IP address literal (IPv6 with or without brackets). */
export function isIpLiteral(text: string): boolean {
  return ipaddr.isValid(stripBrackets(text));
}

/** How a range reads in an error message: "a loopback address", "a private address". */
export function describeRange(range: string): string {
  const words: Record<string, string> = {
    loopback: "a loopback address",
    private: "a private address",
    linkLocal: "a link-local address (cloud metadata included)",
    uniqueLocal: "a unique-local address",
    unspecified: "an unspecified address",
    multicast: "a multicast address",
    broadcast: "a broadcast address",
    carrierGradeNat: "a carrier-grade NAT address",
  };
  return words[range] ?? "a reserved address";
}

function stripBrackets(text: string): string {
  return text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
}

/**
 * The test-only allow-list (`ROUTER_OUTBOUND_ALLOW_HOSTS`): host names compared case-insensitively,
 * addresses compared in their canonical form, so `::ffff:127.0.0.1` matches `127.0.0.1`.
 */
export class AllowedHosts {
  private readonly entries: ReadonlySet<string>;

  constructor(hosts: readonly string[] = []) {
    this.entries = new Set(hosts.map(canonicalHost).filter((h) => h !== ""));
  }

  get size(): number {
    return this.entries.size;
  }

  has(hostOrAddress: string): boolean {
    return this.entries.size > 0 && this.entries.has(canonicalHost(hostOrAddress));
  }

  list(): string[] {
    return [...this.entries];
  }
}

function canonicalHost(host: string): string {
  const bare = stripBrackets(host.trim().toLowerCase());
  return ipaddr.isValid(bare) ? ipaddr.process(bare).toString() : bare;
}
