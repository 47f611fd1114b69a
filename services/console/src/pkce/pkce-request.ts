import { createHash, timingSafeEqual } from "node:crypto";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { sessions } from "@router/management-api";

// The request's fields and their rules are the description's (@router/management-api).
export const { PKCE_METHOD, KEY_LABEL_MAX } = sessions;
const requestFields = sessions.pkceRequestFields;

// Where plain http is allowed for a callback: the app runs on the person's own machine.
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The body fields of approve; describe reads the same names from its query. */
export const PKCE_REQUEST_FIELDS = ["callback_url", "code_challenge", "code_challenge_method", "key_label"] as const;

/** An authorization request that passed every rule. */
export interface PkceRequest {
  /** The callback as it will be redirected to (normalised by URL); null for the headless flow. */
  callbackUrl: string | null;
  /** The callback's host (with a port when it has one), shown on the consent screen. */
  host: string | null;
  headless: boolean;
  codeChallenge: string;
  keyLabel: string;
}

/** A callback URL the code may be sent to: https, or http on the person's own machine. */
function callbackOf(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("callback_url", "must be an absolute https URL");
  }
  const loopbackHttp = url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !loopbackHttp) throw invalid("callback_url", "must be https (http only on localhost)");
  if (url.username !== "" || url.password !== "") throw invalid("callback_url", "must not carry a user name or password");
  // RFC 6749 section 3.1.2: a redirection endpoint has no fragment.
  if (url.href.includes("#")) throw invalid("callback_url", "must not have a fragment (#...)");
  if (url.searchParams.has("code")) throw invalid("callback_url", "must not carry a code parameter; the code is added to it");
  return url;
}

/**
 * Checks an authorization request, from describe's query or approve's body; a 400 names the field.
 * Unknown fields are the caller's business: approve refuses them before calling this, describe
 * ignores them (the consent page forwards its whole query). In a body, `callback_url: null` means
 * headless, as describe reports it.
 */
export function parsePkceRequest(input: Record<string, unknown>, where: "query" | "body"): PkceRequest {
  const fields = where === "body" && input.callback_url === null ? { ...input, callback_url: undefined } : input;
  const r = parseInput(requestFields, fields);
  if (r.callback_url === undefined) {
    if (r.key_label === undefined) throw invalid("key_label", "required for the headless flow (no callback_url)");
    return { callbackUrl: null, host: null, headless: true, codeChallenge: r.code_challenge, keyLabel: r.key_label };
  }
  const url = callbackOf(r.callback_url);
  return {
    callbackUrl: url.href,
    host: url.host,
    headless: false,
    codeChallenge: r.code_challenge,
    keyLabel: r.key_label ?? url.host.slice(0, KEY_LABEL_MAX),
  };
}

/**
 * The callback with the code added after the app's own query, which stays as the app wrote it
 * (setting `searchParams` would re-encode all of it).
 */
export function redirectWithCode(callbackUrl: string, code: string): string {
  const url = new URL(callbackUrl);
  const added = new URLSearchParams({ code }).toString();
  url.search = url.search.length > 1 ? `${url.search}&${added}` : `?${added}`;
  return url.href;
}

/** BASE64URL(SHA-256(verifier)), the S256 challenge of a verifier (RFC 7636 section 4.2). */
export function s256Challenge(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/**
 * Whether `verifier` answers `challenge` under S256. Both sides are hashed to equal length first,
 * so the comparison takes the same time whatever the stored challenge's length or content.
 */
export function verifierMatches(verifier: string, challenge: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(s256Challenge(verifier)), digest(challenge));
}
