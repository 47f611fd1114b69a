import type Redis from "ioredis";

/** Resolves once the connection is ready (at once when it is already). */
export function ready(client: Redis): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve) => client.once("ready", () => resolve()));
}
