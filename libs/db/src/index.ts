export * from "./db";
export * from "./postgres";
export * from "./pglite";
export * from "./migrate";
export * from "./service-db";
