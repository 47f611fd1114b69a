export * from "./server";
export * from "./client";
export * from "./errors";
