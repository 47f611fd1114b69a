import { z } from "zod";
import { dataOf, deletedOf, pageOf, route, timestamp } from "./route";

// An HTTP field name (RFC 9110 token).
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// Visible ASCII and inner spaces: no line breaks or control characters that could split the request.
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * Headers a destination may not set: the ones every delivery sets itself (content type, length,
 * signature, agent), the connection's own, and anything that would change where or how the request
 * goes.
 */
const RESERVED_HEADERS = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "host",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-authorization",
  "proxy-connection",
  "user-agent",
  "x-router-signature",
  "cookie",
]);

const sampleRate = z
  .number({ error: "must be a number from 0 to 1" })
  .min(0, "must be a number from 0 to 1")
  .max(1, "must be a number from 0 to 1");

const destinationName = z
  .string({ error: "must be a string or null" })
  .trim()
  .min(1, "must not be empty")
  .max(100, "must be at most 100 characters")
  .nullable();

export const DESTINATION_KINDS = ["webhook", "otlp"] as const;

/** `POST /v1/broadcast/destinations`; the broadcast service then checks the URL and the header pair. */
export const createDestinationBody = z
  .object({
    kind: z.enum(DESTINATION_KINDS, { error: "must be webhook or otlp" }),
    url: z.string({ error: "is required (an https URL)" }),
    name: destinationName.optional(),
    header_name: z
      .string({ error: "must be a string" })
      .regex(HEADER_NAME, "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")
      .refine((h) => !RESERVED_HEADERS.has(h.toLowerCase()), { message: "is set by every delivery and cannot be configured" })
      .optional(),
    header_value: z
      .string({ error: "must be a string" })
      .max(4096, "must be at most 4096 characters")
      .regex(HEADER_VALUE, "must be visible characters without line breaks or surrounding spaces")
      .optional(),
    sample_rate: sampleRate.default(1),
  })
  .strict();

export const patchDestinationBody = z
  .object({
    disabled: z.boolean({ error: "must be true or false" }).optional(),
    sample_rate: sampleRate.optional(),
    name: destinationName.optional(),
  })
  .strict()
  .refine((b) => b.disabled !== undefined || b.sample_rate !== undefined || b.name !== undefined, {
    message: "names nothing to change (disabled, sample_rate or name)",
  });

/** A destination; the signing secret only in the answer that created a webhook destination. */
export const destination = z.object({
  id: z.string(),
  kind: z.enum(DESTINATION_KINDS),
  url: z.string(),
  name: z.string().nullable(),
  sample_rate: z.number(),
  disabled: z.boolean(),
  header_name: z.string().nullable(),
  header_hint: z.string().nullable(),
  last_attempt_at: timestamp.nullable(),
  last_success_at: timestamp.nullable(),
  last_http_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: timestamp,
  signing_secret: z.string().optional(),
});

const m = { owner: "broadcast" as const, access: "management" as const };

export const BROADCAST_ROUTES = [
  route({ ...m, permission: "read", method: "get", path: "/v1/broadcast/destinations", summary: "Broadcast destinations", answer: pageOf(destination) }),
  route({
    ...m,
    permission: "config:write",
    method: "post",
    path: "/v1/broadcast/destinations",
    summary: "Add a broadcast destination",
    body: createDestinationBody,
    answer: dataOf(destination),
    status: 201,
    refused: [409],
  }),
  route({
    ...m,
    permission: "config:write",
    method: "patch",
    path: "/v1/broadcast/destinations/:id",
    summary: "Change a broadcast destination",
    body: patchDestinationBody,
    answer: dataOf(destination),
  }),
  route({ ...m, permission: "config:write", method: "delete", path: "/v1/broadcast/destinations/:id", summary: "Remove a broadcast destination", answer: dataOf(deletedOf("id")) }),
  route({
    ...m,
    permission: "config:write",
    method: "post",
    path: "/v1/broadcast/destinations/:id/test",
    summary: "Send a test trace to a destination",
    answer: dataOf(z.object({ delivered: z.boolean(), http_status: z.number().int().nullable(), error: z.string().nullable() })),
  }),
];
