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
