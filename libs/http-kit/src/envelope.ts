import { DomainError } from "@router/errors";
import { ZodError, type ZodType, type z } from "zod";

export interface ErrorBody {
  error: { status: number; code: string; message: string; details?: Record<string, unknown> };
}

export function errorBody(status: number, code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: details ? { status, code, message, details } : { status, code, message } };
}

/** Turns a zod failure into a 400 that names the first bad field and lists every issue. */
export function fromZod(err: ZodError, where: string): DomainError {
  const issues = err.issues.map((i) => {
    // An unknown key is named itself, not the object that holds it.
    const path = i.code === "unrecognized_keys" && i.keys[0] !== undefined ? [...i.path, i.keys[0]] : i.path;
    return { field: [where, ...path].filter((p) => p !== "").join("."), message: i.message };
  });
  const first = issues[0] ?? { field: where, message: "invalid" };
  return new DomainError("invalid_request", `${first.field}: ${first.message}`, {
    details: { field: first.field, issues },
  });
}

/** Validates `value` against `schema`; throws a 400 DomainError naming the field on failure. */
export function parseInput<S extends ZodType>(schema: S, value: unknown, where = "body"): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw fromZod(r.error, where === "body" ? "" : where);
  return r.data;
}
