import { invalid } from "@router/errors";
import { z } from "zod";

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

const name = z.string({ error: "must be a string or null" }).trim().min(1, "must not be empty").max(100, "must be at most 100 characters").nullable();

export const createDestinationBody = z
  .object({
    kind: z.enum(["webhook", "otlp"], { error: "must be webhook or otlp" }),
    url: z.string({ error: "is required (an https URL)" }),
    name: name.optional(),
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

export type CreateDestination = z.infer<typeof createDestinationBody>;

/** The rules that span fields: a header is a name and a value together, and only `otlp` carries one. */
export function checkHeaderPair(body: CreateDestination): { name: string; value: string } | null {
  const { header_name: headerName, header_value: headerValue } = body;
  if (headerName === undefined && headerValue === undefined) return null;
  if (body.kind !== "otlp") throw invalid(headerName !== undefined ? "header_name" : "header_value", "only otlp destinations carry a header");
  if (headerName === undefined) throw invalid("header_name", "is required with header_value");
  if (headerValue === undefined) throw invalid("header_value", "is required with header_name");
  return { name: headerName, value: headerValue };
}

export const patchDestinationBody = z
  .object({
    disabled: z.boolean({ error: "must be true or false" }).optional(),
    sample_rate: sampleRate.optional(),
    name: name.optional(),
  })
  .strict()
  .refine((b) => b.disabled !== undefined || b.sample_rate !== undefined || b.name !== undefined, {
    message: "names nothing to change (disabled, sample_rate or name)",
  });

const DESTINATION_ID = /^dst_[0-9A-Za-z]{1,64}$/;

/** The `{id}` of a destination route; a malformed one is a 400 naming `id`. */
export function destinationIdOf(value: unknown): string {
  const id = typeof value === "string" ? value : "";
  if (!DESTINATION_ID.test(id)) throw invalid("id", "must be a destination id (dst_ followed by letters and digits)");
  return id;
}
