import { ROLES } from "@router/access";
import { z } from "zod";
import { displayName } from "./organisations";
import { dataOf, pageOf, route, timestamp } from "./route";

// ---- sessions ---------------------------------------------------------------------------------

/** `POST /v1/auth/exchange`: a management key for a dashboard session. */
export const exchangeKeyBody = z.object({ key: z.string().min(1) });
/** `POST /v1/auth/switch`: the organisation of the person's to act in. */
export const switchBody = z.object({ org_id: z.string().regex(/^org_[0-9A-Za-z]{1,64}$/, "expected an organisation id (org_...)") });

export const session = z
  .object({
    expires_at: timestamp,
    org_id: z.string(),
    key_name: z.string().nullable().meta({ description: "The management key exchanged for the session; null for a person's sign-in" }),
    user: z
      .object({ id: z.string(), name: z.string().nullable(), email: z.string().nullable(), avatar_url: z.string().nullable(), provider: z.string() })
      .nullable(),
    auth_method: z.enum(["management_key", "oauth", "wallet", "invitation"]),
  })
  .meta({ id: "Session" });

/** An organisation the caller may act in (`GET /v1/auth/organizations`). */
export const membership = z
  .object({ id: z.string(), name: z.string().nullable(), role: z.enum(ROLES), role_name: z.string(), current: z.boolean() })
  .meta({ id: "Membership" });

// ---- OAuth PKCE for apps ----------------------------------------------------------------------

/** The one challenge method codes are issued under (RFC 7636 section 4.2). */
export const PKCE_METHOD = "S256";

/** Longest key label; a default taken from a longer callback host is cut to it. */
export const KEY_LABEL_MAX = 200;

// RFC 7636: a verifier is 43 to 128 unreserved characters; an S256 challenge is base64url.
const CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

const required = (what: string) => (issue: { input: unknown }) => (issue.input === undefined ? "required" : `expected ${what}`);

/** `code_challenge_method`: `S256`, sent explicitly; `plain`, `none` and anything else are refused. */
export const challengeMethod = z.literal(PKCE_METHOD, {
  error: "must be S256 (plain and none are refused; send it explicitly)",
});

export const codeVerifier = z
  .string({ error: required("a string") })
  .regex(VERIFIER, "must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)");

/**
 * The fields an authorization request carries, as the query of describe or the body of approve.
 * The gateway checks the callback URL itself after parsing (https, or http on loopback).
 */
export const pkceRequestFields = z.object({
  callback_url: z.string({ error: required("a string") }).optional(),
  code_challenge: z
    .string({ error: required("a string") })
    .regex(CHALLENGE, "must be 43 to 128 characters of the base64url alphabet (A-Z a-z 0-9 - _)"),
  code_challenge_method: challengeMethod,
  key_label: displayName(KEY_LABEL_MAX).optional(),
});

/** `POST /v1/auth/keys`: the code and the verifier of its challenge. */
export const pkceExchangeBody = z.object({
  code: z.string({ error: (i) => (i.input === undefined ? "required" : "expected a string") }).min(1, "required").max(512),
  code_verifier: codeVerifier,
  code_challenge_method: challengeMethod.optional(),
});

export const pkceDescription = z.object({
  callback_url: z.string().nullable(),
  host: z.string().nullable(),
  headless: z.boolean(),
  key_label: z.string(),
  code_challenge_method: z.literal(PKCE_METHOD),
  limit: z.number().meta({ description: "USD, the key's hard lifetime ceiling" }),
  expires_in_days: z.number().int(),
});

export const pkceApproval = z.object({
  code: z.string(),
  redirect_to: z.string().nullable().meta({ description: "The callback with the code added; null for the headless flow" }),
  expires_at: timestamp,
});

export const pkceKey = z.object({
  key: z.string(),
  hash: z.string(),
  label: z.string(),
  limit: z.number().meta({ description: "USD" }),
  expires_at: timestamp,
});

// ---- sign-in ----------------------------------------------------------------------------------

export const signInMethods = z.object({ management_key: z.boolean(), oauth: z.array(z.string()), wallet: z.boolean() });

/**
 * The wallet sign-in bodies. An address is `0x` and 40 hex digits, lower-cased so that one wallet is
 * one person however it is written; `checksumHolds` checks a mixed-case address's EIP-55 checksum
 * (the gateway passes its own, which needs a Keccak hash; the description's takes any).
 */
export function walletBodies(checksumHolds: (address: string) => boolean) {
  const address = z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte hex address")
    .refine(checksumHolds, "the mixed-case address fails its EIP-55 checksum")
    .transform((a) => a.toLowerCase());
  return {
    challenge: z.object({ address }),
    verify: z.object({
      address,
      signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "expected a 65-byte 0x-prefixed hex signature"),
      nonce: z.string().min(8).max(64),
    }),
  };
}
const wallet = walletBodies(() => true);

export const walletChallenge = z.object({ message: z.string(), nonce: z.string(), expires_at: timestamp });
export const walletSession = z.object({ expires_at: timestamp, org_id: z.string(), is_new_user: z.boolean() });

// ---- the routes -------------------------------------------------------------------------------

const owner = "console";
const serving = "forwarded" as const;
const management = { owner, serving, access: "management" } as const;
const open = { owner, serving, access: "public", permission: null } as const;

export const SESSION_ROUTES = [
  route({ ...open, method: "post", path: "/v1/auth/exchange", summary: "Exchange a management key for a dashboard session (sets the cookies)", body: exchangeKeyBody, answer: dataOf(session), refused: [401] }),
  route({ ...management, sessionOnly: true, permission: "read", method: "get", path: "/v1/auth/session", summary: "The current dashboard session", answer: dataOf(session) }),
  route({
    ...open,
    method: "post",
    path: "/v1/auth/signout",
    summary: "End the current session (clears the cookies; the session ends only with the CSRF token)",
    // Public: the session it ends is read from its cookie, and ended only when the CSRF token holds.
    passHeaders: ["cookie", "x-csrf-token"],
    answer: dataOf(z.object({ ended: z.boolean() })),
  }),
  route({ ...management, permission: "read", method: "get", path: "/v1/auth/organizations", summary: "The organisations the caller may act in", answer: pageOf(membership) }),
  route({
    ...management,
    permission: "read",
    method: "post",
    path: "/v1/auth/switch",
    summary: "Switch the session to another organisation of the person",
    body: switchBody,
    answer: dataOf(z.object({ org_id: z.string() })),
  }),
  route({
    ...open,
    method: "get",
    path: "/v1/auth/pkce",
    summary: "Describe an OAuth PKCE authorization request (for the consent page)",
    query: pkceRequestFields,
    answer: dataOf(pkceDescription),
  }),
  route({
    ...management,
    permission: "config:write",
    method: "post",
    path: "/v1/auth/pkce/approve",
    summary: "Approve an OAuth PKCE request; answers the code and where to send it",
    body: pkceRequestFields,
    answer: dataOf(pkceApproval),
  }),
  route({
    ...open,
    method: "post",
    path: "/v1/auth/keys",
    summary: "Exchange an OAuth PKCE code for an inference key (CORS: any origin)",
    body: pkceExchangeBody,
    answer: dataOf(pkceKey),
  }),
  route({ ...open, method: "get", path: "/v1/auth/methods", summary: "The sign-in methods this deployment offers", answer: dataOf(signInMethods) }),
  route({ ...open, method: "post", path: "/v1/auth/wallet/challenge", summary: "A Sign-In with Ethereum message to sign", body: wallet.challenge, answer: dataOf(walletChallenge) }),
  route({ ...open, method: "post", path: "/v1/auth/wallet/verify", summary: "Verify the signed message and start a session", body: wallet.verify, answer: dataOf(walletSession), refused: [401] }),
];
