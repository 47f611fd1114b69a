export * from "./roles";
export * from "./principal";
