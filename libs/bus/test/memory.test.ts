import { createLogger } from "@router/logging";
import { createBus } from "../src";
import { runBusContract } from "./contract";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

runBusContract("memory", (overrides) =>
  createBus({
    kind: "memory",
    clientId: "memory-contract",
    log,
    reclaimIdleMs: 300,
    retryDelayMs: 10,
    closeTimeoutMs: 500,
    ...overrides,
  }),
);
