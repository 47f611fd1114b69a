import { invalid } from "@router/errors";
import { addressRange, describeRange, isIpLiteral, type AllowedHosts } from "./addresses";

export const MAX_TARGET_URL_LENGTH = 2048;

/**
 * Why `value` cannot be an outbound target, as the rest of a sentence naming the field, or null
 * when it can. Form only (no DNS): https, the default port, no user name or password, a fully
 * qualified host name or a public IP literal, never `localhost`. Hosts on the test-only allow-list
 * pass with any port.
 */
export function targetUrlProblem(value: string, allowed?: AllowedHosts): string | null {
  if (value.length > MAX_TARGET_URL_LENGTH) return `must be at most ${MAX_TARGET_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute https URL";
  }
  if (url.protocol !== "https:") return "must be an https URL";
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password";
  // WHATWG parsing has already normalised the host: `0x7f.1` and `2130706433` read as 127.0.0.1.
  const host = url.hostname.toLowerCase();
  if (host === "") return "must name a host";
  if (allowed?.has(host)) return null;
  if (url.port !== "") return "must use the default https port (443)";
  if (isIpLiteral(host)) {
    const range = addressRange(host);
    return range === "unicast" ? null : `must not be ${describeRange(range)}`;
  }
  if (host === "localhost" || host.endsWith(".localhost")) return "must not name localhost";
  // A single-label name is completed by the resolver's search domains: an internal host.
  if (!host.includes(".") || host.endsWith(".")) return "must name a public host by its full domain name";
  return null;
}

/**
 * Checks a target URL when it is saved; throws a 400 naming `field` when it cannot be one.
 * Returns the parsed URL.
 */
export function checkTargetUrl(value: string, field: string, allowed?: AllowedHosts): URL {
  const problem = targetUrlProblem(value, allowed);
  if (problem !== null) throw invalid(field, problem);
  return new URL(value);
}
