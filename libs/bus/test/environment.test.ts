import { ConfigError, loadConfig, z } from "@router/config";
import { createLogger } from "@router/logging";
import { busConfigOf, busEnvironment, checkBusEnvironment, createBus } from "../src";

const schema = z.object({ ...busEnvironment }).superRefine(checkBusEnvironment);
const log = createLogger({ level: "silent" });

describe("bus settings from the environment", () => {
  it("passes ROUTER_BUS_BATCH_WAIT_MS to the bus config, and leaves it unset by default", () => {
    const set = busConfigOf(loadConfig(schema, { ROUTER_BUS_BATCH_WAIT_MS: "200" }), { clientId: "t", dataDir: "/tmp", log });
    expect(set.batchWaitMs).toBe(200);
    const unset = busConfigOf(loadConfig(schema, {}), { clientId: "t", dataDir: "/tmp", log });
    expect(unset.batchWaitMs).toBeUndefined();
  });

  it.each(["-1", "abc", "1.5", "20000"])("refuses ROUTER_BUS_BATCH_WAIT_MS=%s, naming it", (value) => {
    expect(() => loadConfig(schema, { ROUTER_BUS_BATCH_WAIT_MS: value })).toThrow(ConfigError);
    expect(() => loadConfig(schema, { ROUTER_BUS_BATCH_WAIT_MS: value })).toThrow(/ROUTER_BUS_BATCH_WAIT_MS/);
  });

  it("passes ROUTER_BUS_REDIS_ENTRY_LAYOUT to the bus config, unset (fields) by default, and refuses others by name", () => {
    const packed = busConfigOf(loadConfig(schema, { ROUTER_BUS_REDIS_ENTRY_LAYOUT: "packed" }), { clientId: "t", dataDir: "/tmp", log });
    expect(packed.redisEntryLayout).toBe("packed");
    expect(busConfigOf(loadConfig(schema, {}), { clientId: "t", dataDir: "/tmp", log }).redisEntryLayout).toBeUndefined();
    expect(() => loadConfig(schema, { ROUTER_BUS_REDIS_ENTRY_LAYOUT: "compact" })).toThrow(/ROUTER_BUS_REDIS_ENTRY_LAYOUT/);
  });

  it("refuses a negative batchWaitMs given to the bus directly", async () => {
    await expect(createBus({ kind: "memory", clientId: "t", log, batchWaitMs: -5 })).rejects.toThrow(/bus\.batchWaitMs/);
  });
});
