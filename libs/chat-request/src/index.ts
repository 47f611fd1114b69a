export * from "./request-schema";
