import { ACTIVITY_ROUTES } from "./activity";
import { ALERTS_ROUTES } from "./alerts";
import { BROADCAST_ROUTES } from "./broadcast";
import { CONSOLE_ROUTES } from "./console";
import { KEY_ROUTES } from "./keys";
import { LEDGER_ROUTES } from "./ledger";
import { ORGANISATION_ROUTES } from "./organisations";
import { PEOPLE_ROUTES } from "./people";
import { PROVIDER_KEY_ROUTES } from "./provider-keys";
import { REPORTS_ROUTES } from "./reports";
import type { Access, ManagementRoute, Owner } from "./route";
import { ROUTING_ROUTES } from "./routing";
import { RUNAWAY_ROUTES } from "./runaway";
import { SESSION_ROUTES } from "./sessions";

/** Every management route the edge serves, for another service or (owner `gateway`) itself, one description each. */
export const MANAGEMENT_ROUTES: readonly ManagementRoute[] = [
  ...ROUTING_ROUTES,
  ...ACTIVITY_ROUTES,
  ...LEDGER_ROUTES,
  ...REPORTS_ROUTES,
  ...ALERTS_ROUTES,
  ...RUNAWAY_ROUTES,
  ...BROADCAST_ROUTES,
  ...CONSOLE_ROUTES,
  ...KEY_ROUTES,
  ...PROVIDER_KEY_ROUTES,
  ...ORGANISATION_ROUTES,
  ...PEOPLE_ROUTES,
  ...SESSION_ROUTES,
];

/**
 * Path families a service owns whole: a path under one that no description names (a wrong id
 * depth, a route of a newer owner) still reaches the owner, which answers its own 404. Express
 * patterns; each covers at least one description of the same owner and access.
 */
export interface OwnedFamily {
  owner: Owner;
  access: Access;
  paths: readonly string[];
}

export const OWNED_FAMILIES: readonly OwnedFamily[] = [
  { owner: "activity", access: "management", paths: ["/v1/activity", "/v1/activity/*rest"] },
  { owner: "alerts", access: "management", paths: ["/v1/alerts/channels", "/v1/alerts/channels/*rest"] },
  { owner: "broadcast", access: "management", paths: ["/v1/broadcast/destinations", "/v1/broadcast/destinations/*rest"] },
  { owner: "routing", access: "management", paths: ["/v1/presets", "/v1/presets/*rest"] },
  { owner: "routing", access: "management", paths: ["/v1/guardrails", "/v1/guardrails/*rest"] },
  { owner: "ledger", access: "any", paths: ["/v1/runs", "/v1/runs/*rest"] },
];

/** The description of `METHOD /path` (express form), if any. */
export function managementRoute(key: string): ManagementRoute | undefined {
  return MANAGEMENT_ROUTES.find((r) => r.key === key);
}
