export * from "./loading-cache";
export * from "./organisation-state-cache";
