import { invalid } from "@router/errors";
import { broadcast } from "@router/management-api";
import type { z } from "zod";

/** The bodies as the API description gives them (@router/management-api). */
export const createDestinationBody = broadcast.createDestinationBody;
export const patchDestinationBody = broadcast.patchDestinationBody;

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

const DESTINATION_ID = /^dst_[0-9A-Za-z]{1,64}$/;

/** The `{id}` of a destination route; a malformed one is a 400 naming `id`. */
export function destinationIdOf(value: unknown): string {
  const id = typeof value === "string" ? value : "";
  if (!DESTINATION_ID.test(id)) throw invalid("id", "must be a destination id (dst_ followed by letters and digits)");
  return id;
}
