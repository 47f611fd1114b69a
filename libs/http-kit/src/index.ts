export * from "./app";
export * from "./envelope";
export * from "./identity";
export * from "./metrics";
export * from "./internal-http";
export * from "./json-depth";
export * from "./session-cookies";
export * from "./object-body";
