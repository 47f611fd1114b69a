export * from "./key-secret";
export * from "./key-ceiling";
export * from "./api-key";
