import { busConfigOf } from "@router/bus";
import { ConfigError } from "@router/config";
import { createLogger } from "@router/logging";
import { rateLimitOptionsOf } from "@router/gateway";
import { feeScheduleOf } from "@router/ledger";
import { loadEmbeddedConfig } from "../src/config";

const log = createLogger({ level: "silent" });
const busOf = (env: NodeJS.ProcessEnv) =>
  busConfigOf(loadEmbeddedConfig(env), { clientId: "router", dataDir: "/data", log, outboxDir: "/data/outbox" });

describe("npm start's bus settings", () => {
  it("default to the in-process bus, batching as the bus does by default", () => {
    expect(busOf({})).toMatchObject({ kind: "memory", batchWaitMs: undefined, outboxDir: "/data/outbox" });
  });

  it("take ROUTER_BUS_BATCH_WAIT_MS and KAFKA_BROKERS as every standalone service does", () => {
    expect(busOf({ ROUTER_BUS_BATCH_WAIT_MS: "200" }).batchWaitMs).toBe(200);
    expect(busOf({ ROUTER_BUS: "kafka", KAFKA_BROKERS: "k1:9092, k2:9092" }).kafkaBrokers).toEqual(["k1:9092", "k2:9092"]);
  });

  it.each([
    [{ ROUTER_BUS_BATCH_WAIT_MS: "soon" }, /ROUTER_BUS_BATCH_WAIT_MS/],
    [{ ROUTER_BUS: "redis" }, /REDIS_URL: required when ROUTER_BUS=redis/],
    [{ ROUTER_BUS: "kafka" }, /KAFKA_BROKERS: required when ROUTER_BUS=kafka/],
    [{ ROUTER_BUS_NAMESPACE: "a b" }, /ROUTER_BUS_NAMESPACE/],
  ])("refuses %j, naming the setting", (env, named) => {
    expect(() => loadEmbeddedConfig(env)).toThrow(ConfigError);
    expect(() => loadEmbeddedConfig(env)).toThrow(named);
  });
});

describe("npm start's credit settings", () => {
  it("take the fee schedule and the inference tiers as the standalone ledger and gateway do", () => {
    const config = loadEmbeddedConfig({ LEDGER_FEE_BPS: "550", LEDGER_FEE_MIN: "0.80", ROUTER_RATE_TIERS: '[{"purchased": 0, "per_minute": 20}]' });
    expect(feeScheduleOf(config)).toMatchObject({ feeBps: 550, feeMin: 800_000_000n, minPurchase: 5_000_000_000n });
    expect(rateLimitOptionsOf(config).rateTiers).toEqual([{ purchased: 0n, windows: [{ points: 20, seconds: 60 }] }]);
  });

  it("charge no fee and set no tier by default", () => {
    expect(feeScheduleOf(loadEmbeddedConfig({})).feeBps).toBe(0);
    expect(rateLimitOptionsOf(loadEmbeddedConfig({})).rateTiers).toEqual([]);
  });

  it.each([
    [{ LEDGER_FEE_BPS: "twelve" }, /LEDGER_FEE_BPS/],
    [{ ROUTER_RATE_TIERS: "[]" }, /ROUTER_RATE_TIERS/],
  ])("refuses %j, naming the setting", (env, named) => {
    expect(() => loadEmbeddedConfig(env)).toThrow(named);
  });
});

describe("npm start's sign-in settings", () => {
  it("reads the console's names, and the gateway's former ones until they are renamed", () => {
    expect(loadEmbeddedConfig({ CONSOLE_PKCE_KEY_DAYS: "7" }).CONSOLE_PKCE_KEY_DAYS).toBe(7);
    const former = loadEmbeddedConfig({ GATEWAY_PKCE_KEY_DAYS: "5", GATEWAY_WALLET_SIGNIN: "false" });
    expect({ days: former.CONSOLE_PKCE_KEY_DAYS, wallet: former.CONSOLE_WALLET_SIGNIN }).toEqual({ days: 5, wallet: false });
    expect(loadEmbeddedConfig({}).CONSOLE_PKCE_KEY_DAYS).toBe(30);
  });
});
