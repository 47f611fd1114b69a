export * from "./sealer";
export * from "./provider-credentials";
