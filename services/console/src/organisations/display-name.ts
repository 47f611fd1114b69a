import { organisations } from "@router/management-api";

/** Names people see: the descriptions' rules (@router/management-api), so routes and stores agree. */
export const { displayName, ORGANISATION_NAME, WORKSPACE_NAME } = organisations;
