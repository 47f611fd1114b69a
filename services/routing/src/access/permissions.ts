import { DomainError } from "@router/errors";
import type { Identity } from "@router/http-kit";

/**
 * Routing's configuration (defaults, and later presets, privacy and guardrails) is managed with a
 * management key or a dashboard session; an inference key must not reconfigure how its own traffic
 * is routed. Any role may read.
 */
export function requireConfigReader(identity: Identity): Identity {
  if (identity.credential === "inference") {
    throw new DomainError("permission_denied", "routing settings are managed with a management key or a dashboard session", {
      details: { credential: identity.credential },
    });
  }
  return identity;
}

/**
 * `org:write` (organisation name, routing defaults, privacy policy): Owner and Admin. The gateway
 * signs a management key with no person behind it as owner.
 */
export function requireOrgWrite(identity: Identity): Identity {
  requireConfigReader(identity);
  if (identity.role !== "owner" && identity.role !== "admin") {
    throw new DomainError("permission_denied", `changing this needs the owner or admin role (org:write); this caller is ${identity.role}`, {
      details: { role: identity.role, needs: "org:write" },
    });
  }
  return identity;
}
