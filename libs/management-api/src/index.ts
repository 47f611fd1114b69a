/**
 * The management routes the edge serves, for other services or (owner `gateway`) itself: for
 * each, its method and path, the owning service, who may call, the permission the owner checks,
 * and the zod schemas of its query, body and answer. The gateway's forwarding table, the OpenAPI
 * document and the dashboard's types are made from these; the owners validate with the same schemas.
 */
export * from "./route";
export * from "./routes";
export * as activity from "./activity";
export * as alerts from "./alerts";
export * as broadcast from "./broadcast";
export * as console from "./console";
export { CONSOLE_MCP, CONSOLE_PAGES, DASHBOARD_PAGES, MCP_CALLER_HEADERS, SELF_CALL_HEADER } from "./console";
export * as keys from "./keys";
export * as ledger from "./ledger";
export * as organisations from "./organisations";
export * as people from "./people";
export * as providerKeys from "./provider-keys";
export * as reports from "./reports";
export * as routing from "./routing";
export * as runaway from "./runaway";
export * as sessions from "./sessions";
