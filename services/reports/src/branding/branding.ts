import type { Identity } from "@router/http-kit";
import type { BrandFields } from "./branding-store";

/** The Branding resource (in the service README): the organisation's own name is the fallback heading. */
export type Branding = { org_name: string | null } & BrandFields;

/** The organisation's name comes from the gateway, which alone holds it, in the signed identity. */
export function brandingOf(identity: Identity, fields: BrandFields): Branding {
  return { org_name: identity.orgName ?? null, ...fields };
}
