export * from "./db";
export * from "./postgres";
export * from "./pglite";
export * from "./migrate";
export * from "./service-db";
export { DataDirInUseError, type DataDirOwner } from "./data-dir-lock";
export * from "./connection-loss";
export * from "./database-readiness";
export * from "./service-roles";
