import { promises as dns, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { addressRange, describeRange, type AllowedHosts } from "./addresses";

/** Resolves a host name to every address it has (the injectable DNS step; tests map names by hand). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** A resolved address outside the public unicast ranges: the delivery is refused, never retried. */
export class RefusedAddressError extends Error {
  readonly code = "ROUTER_OUTBOUND_REFUSED_ADDRESS";
  constructor(readonly range: string) {
    super(`the target's host resolves to ${describeRange(range)}, which deliveries never reach`);
    this.name = "RefusedAddressError";
  }
}

/** Why `address` (reached for `hostname`) may not be connected to, or null when it may. */
export function refusedRange(hostname: string, address: string, allowed: AllowedHosts): string | null {
  if (allowed.has(hostname) || allowed.has(address)) return null;
  const range = addressRange(address);
  return range === "unicast" ? null : range;
}

/**
 * The `lookup` the outbound sockets connect with: resolves the host, refuses the connection when
 * ANY address is not public, and hands the socket exactly the addresses it checked. The check and
 * the connect use one answer, so a DNS record that changes in between (rebinding) is never reached.
 */
export function guardedLookup(resolve: Resolve, allowed: AllowedHosts): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        for (const a of addresses) {
          const range = refusedRange(hostname, a.address, allowed);
          if (range !== null) {
            callback(new RefusedAddressError(range), "", 0);
            return;
          }
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        const first = usable[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "", 0);
          return;
        }
        // Node 20 connects with happy eyeballs, which asks for every address (`all: true`).
        if (options.all) (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, "", 0),
    );
  };
}
