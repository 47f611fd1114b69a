import { ConfigError, loadConfig } from "@router/config";
import { gatewayConfigSchema, incompleteSignInProviders, rateLimitOptionsOf, signInOptionsOf } from "../src/config";
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

describe("sign-in settings", () => {
  const load = (env: Record<string, string>) => loadConfig(gatewayConfigSchema, env);

  it("offers nothing by default and says nothing is missing", () => {
    expect(signInOptionsOf(load({}))).toEqual({ oauthProviders: {}, walletSignIn: true });
    expect(incompleteSignInProviders(load({}))).toEqual([]);
  });

  it("offers a provider once all its settings are given (Google's issuer has a default)", () => {
    const config = load({
      GATEWAY_OAUTH_GOOGLE_CLIENT_ID: "g-id",
      GATEWAY_OAUTH_GOOGLE_CLIENT_SECRET: "g-secret",
      GATEWAY_OAUTH_OIDC_ISSUER: "https://login.example.com",
      GATEWAY_OAUTH_OIDC_CLIENT_ID: "o-id",
      GATEWAY_OAUTH_OIDC_CLIENT_SECRET: "o-secret",
      GATEWAY_WALLET_SIGNIN: "false",
    });
    expect(signInOptionsOf(config)).toEqual({
      oauthProviders: {
        google: { issuer: "https://accounts.google.com", clientId: "g-id", clientSecret: "g-secret" },
        oidc: { issuer: "https://login.example.com", clientId: "o-id", clientSecret: "o-secret" },
      },
      walletSignIn: false,
    });
    expect(incompleteSignInProviders(config)).toEqual([]);
  });

  it("names what a partly configured provider lacks, and does not offer it", () => {
    const config = load({ GATEWAY_OAUTH_GOOGLE_CLIENT_ID: "g-id", GATEWAY_OAUTH_OIDC_ISSUER: "https://login.example.com" });
    expect(signInOptionsOf(config).oauthProviders).toEqual({});
    expect(incompleteSignInProviders(config)).toEqual([
      { provider: "google", missing: ["GATEWAY_OAUTH_GOOGLE_CLIENT_SECRET"] },
      { provider: "oidc", missing: ["GATEWAY_OAUTH_OIDC_CLIENT_ID", "GATEWAY_OAUTH_OIDC_CLIENT_SECRET"] },
    ]);
  });
});
