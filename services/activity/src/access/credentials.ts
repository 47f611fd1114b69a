import { DomainError } from "@router/errors";
import type { Identity } from "@router/http-kit";

/**
 * Activity is read with a management key or a dashboard session. Every role holds `usage:read`,
 * so the credential class is the only gate here.
 */
export function requireUsageReader(identity: Identity): void {
  if (identity.credential === "inference") {
    throw new DomainError("permission_denied", "activity is read with a management key or a dashboard session");
  }
}

/** The generation record is the inference caller's own lookup of what a completion cost. */
export function requireInferenceKey(identity: Identity): void {
  if (identity.credential !== "inference") {
    throw new DomainError("permission_denied", "the generation record is read with an inference key");
  }
}
