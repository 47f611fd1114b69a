import { formerSignInSettings, withCurrentNames } from "../src";

describe("sign-in settings under the gateway's former names", () => {
  const environment = {
    GATEWAY_OAUTH_GOOGLE_CLIENT_ID: "old-id",
    GATEWAY_WALLET_SIGNIN: "false",
    GATEWAY_PKCE_KEY_DAYS: "7",
    GATEWAY_WALLET_SIGNIN_EXTRA: "x",
    GATEWAY_LEASE_USE_MS: "0",
    CONSOLE_PKCE_KEY_DAYS: "9",
  };

  it("are named with the console's names, and nothing else is", () => {
    expect(formerSignInSettings(environment)).toEqual([
      { variable: "GATEWAY_OAUTH_GOOGLE_CLIENT_ID", now: "CONSOLE_OAUTH_GOOGLE_CLIENT_ID" },
      { variable: "GATEWAY_PKCE_KEY_DAYS", now: "CONSOLE_PKCE_KEY_DAYS" },
      { variable: "GATEWAY_WALLET_SIGNIN", now: "CONSOLE_WALLET_SIGNIN" },
    ]);
  });

  it("are read under the new names, which win when both are set", () => {
    const read = withCurrentNames(environment, formerSignInSettings(environment));
    expect(read).toMatchObject({ CONSOLE_OAUTH_GOOGLE_CLIENT_ID: "old-id", CONSOLE_WALLET_SIGNIN: "false", CONSOLE_PKCE_KEY_DAYS: "9" });
    expect(read.CONSOLE_LEASE_USE_MS).toBeUndefined();
  });
});
