import { ConfigError, loadConfig } from "@router/config";
import { feeScheduleOf, ledgerConfigSchema, stripeSettingsOf } from "../src/config";

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

describe("budgets, the HTTP port and the bus", () => {
  it("default to port 8085, a 5 s budget refresh and the in-process bus", () => {
    const config = loadConfig(ledgerConfigSchema, {});
    expect(config.LEDGER_HTTP_PORT).toBe(8085);
    expect(config.LEDGER_BUDGET_REFRESH_MS).toBe(5_000);
    expect(config.ROUTER_BUS).toBe("memory");
  });

  it.each([
    [{ LEDGER_BUDGET_REFRESH_MS: "0" }, "LEDGER_BUDGET_REFRESH_MS"],
    [{ LEDGER_HTTP_PORT: "70000" }, "LEDGER_HTTP_PORT"],
    [{ ROUTER_BUS: "redis" }, "REDIS_URL"],
  ])("refuses %j, naming %s", (env, name) => {
    expect(() => loadConfig(ledgerConfigSchema, env)).toThrow(new RegExp(name));
  });
});

describe("payment-processor settings", () => {
  it("leave the processor unconfigured by default", () => {
    const config = loadConfig(ledgerConfigSchema, {});
    expect(stripeSettingsOf(config)).toEqual({ secretKey: undefined, webhookSecret: undefined, apiUrl: undefined });
  });

  it("pass the Stripe key, webhook secret and API address on", () => {
    const config = loadConfig(ledgerConfigSchema, {
      LEDGER_STRIPE_SECRET_KEY: "sk_test_1",
      LEDGER_STRIPE_WEBHOOK_SECRET: "whsec_1",
      LEDGER_STRIPE_API_URL: "http://127.0.0.1:12111",
    });
    expect(stripeSettingsOf(config)).toEqual({ secretKey: "sk_test_1", webhookSecret: "whsec_1", apiUrl: "http://127.0.0.1:12111" });
  });

  it.each([
    [{ LEDGER_STRIPE_API_URL: "not a url" }, "LEDGER_STRIPE_API_URL"],
    [{ LEDGER_STRIPE_API_URL: "ftp://stripe.example" }, "LEDGER_STRIPE_API_URL"],
  ])("refuses %j, naming %s", (env, name) => {
    expect(() => loadConfig(ledgerConfigSchema, env)).toThrow(new RegExp(name));
  });
});

describe("the fee schedule", () => {
  it("charges no fee by default, with purchases from 5 USD", () => {
    expect(feeScheduleOf(loadConfig(ledgerConfigSchema, {}))).toEqual({ feeBps: 0, feeMin: 0n, minPurchase: 5_000_000_000n, checkoutReturnUrl: undefined });
  });

  it("reads basis points and exact USD amounts", () => {
    const config = loadConfig(ledgerConfigSchema, {
      LEDGER_FEE_BPS: "550",
      LEDGER_FEE_MIN: "0.80",
      LEDGER_MIN_PURCHASE: "10",
      LEDGER_CHECKOUT_RETURN_URL: "https://router.example/credits",
    });
    expect(feeScheduleOf(config)).toEqual({ feeBps: 550, feeMin: 800_000_000n, minPurchase: 10_000_000_000n, checkoutReturnUrl: "https://router.example/credits" });
  });

  it.each([
    [{ LEDGER_FEE_BPS: "-1" }, "LEDGER_FEE_BPS"],
    [{ LEDGER_FEE_BPS: "10001" }, "LEDGER_FEE_BPS"],
    [{ LEDGER_FEE_BPS: "5.5" }, "LEDGER_FEE_BPS"],
    [{ LEDGER_FEE_MIN: "-0.5" }, "LEDGER_FEE_MIN"],
    [{ LEDGER_FEE_MIN: "80 cents" }, "LEDGER_FEE_MIN"],
    [{ LEDGER_MIN_PURCHASE: "0" }, "LEDGER_MIN_PURCHASE"],
    [{ LEDGER_CHECKOUT_RETURN_URL: "javascript:alert(1)" }, "LEDGER_CHECKOUT_RETURN_URL"],
  ])("refuses %j, naming %s", (env, name) => {
    expect(() => loadConfig(ledgerConfigSchema, env)).toThrow(new RegExp(name));
  });
});
