import { z } from "zod";

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A name people see (organisation, workspace): trimmed, 1 to `max` characters, no control characters. */
export function displayName(max: number) {
  return z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !CONTROL.test(s), "must not contain control characters");
}

export const ORGANISATION_NAME = displayName(80);
export const WORKSPACE_NAME = displayName(80);
