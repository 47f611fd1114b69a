import { ConfigError, loadConfig } from "@router/config";
import { gatewayConfigSchema } from "../src/config";

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

describe("provider timeouts and the stream keepalive", () => {
  it("default to what docs/decisions.md states", () => {
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

describe("keys issued through OAuth PKCE", () => {
  it("default to a 10 USD ceiling and 30 days", () => {
    expect(loadConfig(gatewayConfigSchema, {})).toMatchObject({ GATEWAY_PKCE_KEY_LIMIT_USD: 10, GATEWAY_PKCE_KEY_DAYS: 30 });
    expect(loadConfig(gatewayConfigSchema, { GATEWAY_PKCE_KEY_LIMIT_USD: "2.5", GATEWAY_PKCE_KEY_DAYS: "7" })).toMatchObject({
      GATEWAY_PKCE_KEY_LIMIT_USD: 2.5,
      GATEWAY_PKCE_KEY_DAYS: 7,
    });
  });

  it.each([
    ["GATEWAY_PKCE_KEY_LIMIT_USD", "0"],
    ["GATEWAY_PKCE_KEY_LIMIT_USD", "-1"],
    ["GATEWAY_PKCE_KEY_LIMIT_USD", "ten"],
    ["GATEWAY_PKCE_KEY_DAYS", "0"],
    ["GATEWAY_PKCE_KEY_DAYS", "1.5"],
    ["GATEWAY_PKCE_KEY_DAYS", "3651"],
  ])("refuses %s=%s, naming the variable", (name, value) => {
    expect(() => loadConfig(gatewayConfigSchema, { [name]: value })).toThrow(new RegExp(name));
  });
});
