export * from "./database";
export * from "./wait";
