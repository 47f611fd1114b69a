export * from "./database";
export * from "./wait";
export * from "./processes";
export * from "./stack";
export * from "./fake-upstream";
export * from "./prometheus";
export * from "./event-stream";
export * from "./bad-chat-requests";
