import { DomainError } from "@router/errors";
import type { Identity } from "@router/http-kit";

/** The generation record is the inference caller's own lookup of what a completion cost. */
export function requireInferenceKey(identity: Identity): void {
  if (identity.credential !== "inference") {
    throw new DomainError("permission_denied", "the generation record is read with an inference key");
  }
}
