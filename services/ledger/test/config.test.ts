import { ConfigError, loadConfig } from "@router/config";
import { ledgerConfigSchema } from "../src/config";

describe("lease settings", () => {
  it("default to a 60 s lease taking at most a quarter of the headroom", () => {
    const config = loadConfig(ledgerConfigSchema, {});
    expect(config.LEDGER_LEASE_TTL_MS).toBe(60_000);
    expect(config.LEDGER_LEASE_SHARE).toBe(4);
  });

  it.each([
    ["LEDGER_LEASE_SHARE", "0"],
    ["LEDGER_LEASE_SHARE", "2.5"],
    ["LEDGER_LEASE_TTL_MS", "0"],
    ["LEDGER_LEASE_TTL_MS", "a minute"],
  ])("refuses %s=%s, naming the variable", (name, value) => {
    expect(() => loadConfig(ledgerConfigSchema, { [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig(ledgerConfigSchema, { [name]: value })).toThrow(new RegExp(name));
  });
});
