import { ConfigError, loadConfig } from "@router/config";
import { gatewayConfigSchema, rateLimitOptionsOf } from "../src/config";
import { perDay, perMinute } from "../src/rate-limits/limits";

describe("GATEWAY_LEASE_USE_MS", () => {
  it("defaults to one second and takes 0 (leases off)", () => {
    expect(loadConfig(gatewayConfigSchema, {}).GATEWAY_LEASE_USE_MS).toBe(1000);
    expect(loadConfig(gatewayConfigSchema, { GATEWAY_LEASE_USE_MS: "0" }).GATEWAY_LEASE_USE_MS).toBe(0);
  });

  it.each(["-1", "1.5", "soon", "60001"])("refuses %s, naming the variable", (value) => {
    expect(() => loadConfig(gatewayConfigSchema, { GATEWAY_LEASE_USE_MS: value })).toThrow(ConfigError);
    expect(() => loadConfig(gatewayConfigSchema, { GATEWAY_LEASE_USE_MS: value })).toThrow(/GATEWAY_LEASE_USE_MS/);
  });
});

describe("GATEWAY_LEDGER_ADMIT_STREAMS", () => {
  it("defaults to four streams and takes 0 (each Admit a unary call)", () => {
    expect(loadConfig(gatewayConfigSchema, {}).GATEWAY_LEDGER_ADMIT_STREAMS).toBe(4);
    expect(loadConfig(gatewayConfigSchema, { GATEWAY_LEDGER_ADMIT_STREAMS: "0" }).GATEWAY_LEDGER_ADMIT_STREAMS).toBe(0);
  });

  it.each(["-1", "2.5", "many", "65"])("refuses %s, naming the variable", (value) => {
    expect(() => loadConfig(gatewayConfigSchema, { GATEWAY_LEDGER_ADMIT_STREAMS: value })).toThrow(/GATEWAY_LEDGER_ADMIT_STREAMS/);
  });
});

describe("provider timeouts and the stream keepalive", () => {
  it("default to what ADR 0022 (docs/adr) and docs/chat-completions.md state", () => {
    const c = loadConfig(gatewayConfigSchema, {});
    expect(c).toMatchObject({
      GATEWAY_UPSTREAM_CONNECT_TIMEOUT_MS: 10_000,
      GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: 600_000,
      GATEWAY_UPSTREAM_STREAM_HEADERS_TIMEOUT_MS: 120_000,
      GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS: 120_000,
      GATEWAY_STREAM_KEEPALIVE_MS: 5_000,
    });
  });

  it.each([
    ["GATEWAY_UPSTREAM_CONNECT_TIMEOUT_MS", "0"],
    ["GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS", "ten minutes"],
    ["GATEWAY_UPSTREAM_STREAM_HEADERS_TIMEOUT_MS", "-5"],
    ["GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS", "1.5"],
    ["GATEWAY_STREAM_KEEPALIVE_MS", "10"],
  ])("refuses %s=%s, naming the variable", (name, value) => {
    expect(() => loadConfig(gatewayConfigSchema, { [name]: value })).toThrow(new RegExp(name));
  });
});

describe("rate limit settings", () => {
  it("default to no trusted proxy, the router:rl prefix and the table's numbers", () => {
    expect(rateLimitOptionsOf(loadConfig(gatewayConfigSchema, {}))).toEqual({
      trustedProxies: [],
      rateLimitPrefix: "router:rl",
      rateLimits: {},
      rateTiers: [],
    });
  });

  it("read GATEWAY_TRUSTED_PROXIES as a comma-separated list", () => {
    const c = loadConfig(gatewayConfigSchema, { GATEWAY_TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.1,loopback" });
    expect(c.GATEWAY_TRUSTED_PROXIES).toEqual(["10.0.0.0/8", "192.0.2.1", "loopback"]);
  });

  it("read GATEWAY_RATE_LIMITS as windows by limit name", () => {
    const c = loadConfig(gatewayConfigSchema, { GATEWAY_RATE_LIMITS: '{"management":{"per_minute":600,"per_day":50000}}' });
    expect(c.GATEWAY_RATE_LIMITS).toEqual({ management: [perMinute(600), perDay(50_000)] });
  });

  it.each([
    ["GATEWAY_TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal"],
    ["GATEWAY_RATE_LIMITS", "management=600"],
    ["GATEWAY_RATE_LIMITS", '{"managment":{"per_minute":600}}'],
    ["GATEWAY_RATE_LIMITS", '{"management":{"per_minute":0}}'],
    ["GATEWAY_RATE_LIMITS", '{"management":{}}'],
    ["GATEWAY_RATE_LIMIT_PREFIX", "has space"],
  ])("refuse %s=%s, naming the variable", (name, value) => {
    expect(() => loadConfig(gatewayConfigSchema, { [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig(gatewayConfigSchema, { [name]: value })).toThrow(new RegExp(name));
  });
});
