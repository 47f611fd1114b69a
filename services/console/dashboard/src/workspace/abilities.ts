import type { Role } from "../api/types";

/**
 * What a role may do, as the gateway's role table says: the dashboard hides what would be refused
 * (the API still decides; a refusal is shown like any other error).
 */
export interface Abilities {
  readUsage: boolean;
  exportUsage: boolean;
  configure: boolean;
  /** org:write: account routing defaults, the privacy policy, guardrails. */
  manageOrg: boolean;
  manageMembers: boolean;
}

export function abilitiesOf(role: Role): Abilities {
  return {
    readUsage: true,
    exportUsage: role === "owner" || role === "admin" || role === "billing",
    configure: role === "owner" || role === "admin" || role === "member",
    manageOrg: role === "owner" || role === "admin",
    manageMembers: role === "owner",
  };
}
