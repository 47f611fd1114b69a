import { DomainError } from "@router/errors";

/** A member's role in an organisation (the enum values of the API). */
export const ROLES = ["owner", "admin", "member", "billing", "readonly"] as const;
export type Role = (typeof ROLES)[number];

/** The roles an owner may give in an invitation or a role change. */
export const ASSIGNABLE_ROLES = ["owner", "member", "billing"] as const;

/** What the dashboard shows for each role. */
export const ROLE_NAMES: Record<Role, string> = {
  owner: "Owner",
  admin: "Admin",
  member: "Developer",
  billing: "Finance",
  readonly: "Read-only",
};

/**
 * What a caller may do. `read` is every read that any role may make (organisation, members,
 * workspaces, keys, configuration); the rest are the abilities the roles differ by.
 */
export type Permission =
  | "read"
  | "usage:read"
  | "usage:export"
  | "billing:read"
  | "billing:write"
  | "config:write"
  | "org:write"
  | "members:write";

/**
 * The one table of who may do what. Every service checks management routes against it, from the
 * signed identity the gateway forwards. A management key with no person behind it is signed as
 * `owner`.
 */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set<Permission>(["read", "usage:read", "usage:export", "billing:read", "billing:write", "config:write", "org:write", "members:write"]),
  admin: new Set<Permission>(["read", "usage:read", "usage:export", "billing:read", "billing:write", "config:write", "org:write"]),
  member: new Set<Permission>(["read", "usage:read", "billing:read", "config:write"]),
  billing: new Set<Permission>(["read", "usage:read", "usage:export", "billing:read", "billing:write"]),
  readonly: new Set<Permission>(["read", "usage:read"]),
};

const NEEDS: Record<Permission, string> = {
  read: "any role",
  "usage:read": "usage:read",
  "usage:export": "usage:export (owner, admin or finance)",
  "billing:read": "billing:read (owner, admin, developer or finance)",
  "billing:write": "billing:write (owner, admin or finance)",
  "config:write": "config:write (owner, admin or developer)",
  "org:write": "org:write (owner or admin)",
  "members:write": "the owner role",
};

/** Who calls, as far as permissions go: the credential class and the role it acts with. */
export interface Actor {
  credential: "inference" | "management" | "session";
  role: Role;
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` holds `permission`. */
export function roleMay(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role]?.has(permission) ?? false;
}

/**
 * Refuses with 403 `permission_denied` unless the caller is a management key or a dashboard
 * session whose role holds `permission`. An inference key never reaches management routes.
 */
export function requirePermission(actor: Actor, permission: Permission): void {
  if (actor.credential === "inference") {
    throw new DomainError("permission_denied", "this route takes a management key or a dashboard session, not an inference key", {
      details: { credential: actor.credential },
    });
  }
  if (!roleMay(actor.role, permission)) {
    throw new DomainError("permission_denied", `this needs ${NEEDS[permission]}; the caller's role is ${actor.role}`, {
      details: { role: actor.role, needs: permission },
    });
  }
}
