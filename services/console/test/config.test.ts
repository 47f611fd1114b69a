import { ConfigError, loadConfig } from "@router/config";
import { consoleConfigSchema, incompleteSignInProviders, signInOptionsOf } from "../src/config";

describe("keys issued through OAuth PKCE", () => {
  it("default to a 10 USD ceiling and 30 days", () => {
    expect(loadConfig(consoleConfigSchema, {})).toMatchObject({ CONSOLE_PKCE_KEY_LIMIT_USD: 10, CONSOLE_PKCE_KEY_DAYS: 30 });
    expect(loadConfig(consoleConfigSchema, { CONSOLE_PKCE_KEY_LIMIT_USD: "2.5", CONSOLE_PKCE_KEY_DAYS: "7" })).toMatchObject({
      CONSOLE_PKCE_KEY_LIMIT_USD: 2.5,
      CONSOLE_PKCE_KEY_DAYS: 7,
    });
  });

  it.each([
    ["CONSOLE_PKCE_KEY_LIMIT_USD", "0"],
    ["CONSOLE_PKCE_KEY_LIMIT_USD", "-1"],
    ["CONSOLE_PKCE_KEY_LIMIT_USD", "ten"],
    ["CONSOLE_PKCE_KEY_DAYS", "0"],
    ["CONSOLE_PKCE_KEY_DAYS", "1.5"],
    ["CONSOLE_PKCE_KEY_DAYS", "3651"],
  ])("refuses %s=%s, naming the variable", (name, value) => {
    expect(() => loadConfig(consoleConfigSchema, { [name]: value })).toThrow(new RegExp(name));
  });
});

describe("sign-in settings", () => {
  const load = (env: Record<string, string>) => loadConfig(consoleConfigSchema, env);

  it("offers nothing by default and says nothing is missing", () => {
    expect(signInOptionsOf(load({}))).toEqual({ oauthProviders: {}, walletSignIn: true });
    expect(incompleteSignInProviders(load({}))).toEqual([]);
  });

  it("offers a provider once all its settings are given (Google's issuer has a default)", () => {
    const config = load({
      CONSOLE_OAUTH_GOOGLE_CLIENT_ID: "g-id",
      CONSOLE_OAUTH_GOOGLE_CLIENT_SECRET: "g-secret",
      CONSOLE_OAUTH_OIDC_ISSUER: "https://login.example.com",
      CONSOLE_OAUTH_OIDC_CLIENT_ID: "o-id",
      CONSOLE_OAUTH_OIDC_CLIENT_SECRET: "o-secret",
      CONSOLE_WALLET_SIGNIN: "false",
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
    const config = load({ CONSOLE_OAUTH_GOOGLE_CLIENT_ID: "g-id", CONSOLE_OAUTH_OIDC_ISSUER: "https://login.example.com" });
    expect(signInOptionsOf(config).oauthProviders).toEqual({});
    expect(incompleteSignInProviders(config)).toEqual([
      { provider: "google", missing: ["CONSOLE_OAUTH_GOOGLE_CLIENT_SECRET"] },
      { provider: "oidc", missing: ["CONSOLE_OAUTH_OIDC_CLIENT_ID", "CONSOLE_OAUTH_OIDC_CLIENT_SECRET"] },
    ]);
  });
});
