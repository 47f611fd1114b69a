export * from "./nanodollars";
export * from "./windows";
