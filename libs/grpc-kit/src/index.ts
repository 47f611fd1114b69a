export * from "./server";
export * from "./client";
export * from "./errors";
export * from "./in-process";
export * from "./call-streams";
