import { z } from "zod";
import { ConfigError } from "./config-error";

const OVERRIDE = /^ROUTER_PROVIDER_([A-Z0-9_]+)_BASE_URL$/;

/**
 * `ROUTER_PROVIDER_<SLUG>_BASE_URL` overrides as `{ slug: url }` (slug lower-cased, trailing
 * slashes dropped), for self-hosted OpenAI-compatible servers, tests and benchmarks. They win over
 * the catalog's base URL. Throws a ConfigError naming a malformed one.
 */
export function providerBaseUrls(environment: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    const m = OVERRIDE.exec(name);
    if (!m?.[1] || !value) continue;
    if (!z.url({ protocol: /^https?$/ }).safeParse(value).success) {
      throw new ConfigError([`${name}: expected an http(s) URL`]);
    }
    out[m[1].toLowerCase()] = value.replace(/\/+$/, "");
  }
  return out;
}
