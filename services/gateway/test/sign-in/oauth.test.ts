import { join } from "node:path";
import { Browser, freePort, httpReady, startNodeProcess, type ChildService } from "@router/testkit";
import { browserOf, startHarness, type Harness } from "../harness";

/**
 * Identity-provider sign-in against a real OpenID Connect provider (oidc-provider) running on
 * loopback: the test is the browser, following every redirect with its cookie jar.
 */
let h: Harness;
let oidc: ChildService;
let issuer: string;

beforeAll(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  h = await startHarness("gw_oauth", {
    oauthProviders: {
      oidc: { issuer, clientId: "router-test", clientSecret: "router-test-secret" },
      // The same provider with a secret it does not accept: the code exchange fails.
      google: { issuer, clientId: "router-test", clientSecret: "not-the-secret" },
    },
  });
  oidc = await startNodeProcess(
    "oidc-provider",
    join(__dirname, "..", "fixtures", "oidc-server.mjs"),
    { OIDC_PORT: String(port), OIDC_REDIRECT_URIS: ["oidc", "google"].map((p) => `${h.url}/v1/auth/oauth/${p}/callback`).join(",") },
    () => httpReady(`${issuer}/.well-known/openid-configuration`),
  );
}, 30_000);

afterAll(async () => {
  await oidc?.stop();
  await h?.close();
});

/** Starts a sign-in and follows the provider's redirects until it sends the browser back; answers the callback URL. */
async function throughProvider(browser: Browser, provider: string): Promise<string> {
  const start = await browser.get(`/v1/auth/oauth/${provider}/start`);
  expect(start.status).toBe(302);
  let location = new URL(start.headers.get("location")!);
  for (let hops = 0; hops < 10 && !location.href.startsWith(`${h.url}/`); hops++) {
    const res = await browser.get(location.href);
    expect([302, 303]).toContain(res.status);
    location = new URL(res.headers.get("location")!, location);
  }
  expect(location.pathname).toBe(`/v1/auth/oauth/${provider}/callback`);
  return location.href;
}

const reasonOf = (res: { status: number; headers: Headers }) => {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  return location.pathname === "/signin" ? location.searchParams.get("error") : location.pathname + location.search;
};

describe("signing in with an identity provider", () => {
  it("redirects to the provider with PKCE (S256), state and nonce, and sets the rt_oauth cookie for ten minutes", async () => {
    const browser = browserOf(h);
    const start = await browser.get("/v1/auth/oauth/oidc/start");
    expect(start.status).toBe(302);
    const to = new URL(start.headers.get("location")!);
    expect(to.origin).toBe(issuer);
    expect(to.searchParams.get("code_challenge_method")).toBe("S256");
    expect(to.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(to.searchParams.get("state")).toBeTruthy();
    expect(to.searchParams.get("nonce")).toBeTruthy();
    expect(to.searchParams.get("redirect_uri")).toBe(`${h.url}/v1/auth/oauth/oidc/callback`);
    const cookie = start.headers.getSetCookie().find((c) => c.startsWith("rt_oauth="))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Max-Age=600/);
    expect(cookie).toMatch(/Path=\/v1\/auth\/oauth/);
    // Sealed: neither the state nor the verifier can be read from it.
    expect(cookie).not.toContain(to.searchParams.get("state")!);
  });

  it("signs a new person in: their own organisation, a session, and /workspace?welcome=1; the second time no welcome", async () => {
    const browser = browserOf(h);
    const callback = await throughProvider(browser, "oidc");
    const landed = await browser.get(callback);
    expect(reasonOf(landed)).toBe("/workspace?welcome=1");
    expect(await browser.cookie("rt_oauth")).toBeUndefined();
    const session = await browser.get("/v1/auth/session");
    expect(session.status).toBe(200);
    expect(session.body.data).toMatchObject({
      auth_method: "oauth",
      key_name: null,
      user: { name: "Alice Example", email: "alice@example.com", avatar_url: "https://example.com/alice.png", provider: "oidc" },
    });
    const orgs = await browser.get("/v1/auth/organizations");
    expect(orgs.body.data).toEqual([{ id: session.body.data.org_id, name: "Alice Example's organisation", role: "owner", role_name: "Owner", current: true }]);
    expect((await browser.post("/v1/workspaces", { name: "Client One" })).status).toBe(201);

    const again = browserOf(h);
    const second = await again.get(await throughProvider(again, "oidc"));
    expect(reasonOf(second)).toBe("/workspace");
    const secondSession = await again.get("/v1/auth/session");
    expect(secondSession.body.data.user.id).toBe(session.body.data.user.id);
    expect(secondSession.body.data.org_id).toBe(session.body.data.org_id);
  });

  it("answers not_configured for a provider this deployment does not offer", async () => {
    const browser = browserOf(h);
    expect(reasonOf(await browser.get("/v1/auth/oauth/github/start"))).toBe("not_configured");
    expect(reasonOf(await browser.get("/v1/auth/oauth/github/callback?code=x&state=y"))).toBe("not_configured");
  });

  it("answers cancelled when the person declined at the provider, provider_error for any other provider error", async () => {
    const browser = browserOf(h);
    const start = await browser.get("/v1/auth/oauth/oidc/start");
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    expect(reasonOf(await browser.get(`/v1/auth/oauth/oidc/callback?error=access_denied&state=${state}`))).toBe("cancelled");
    await browser.get("/v1/auth/oauth/oidc/start");
    expect(reasonOf(await browser.get(`/v1/auth/oauth/oidc/callback?error=server_error&state=${state}`))).toBe("provider_error");
  });

  it("answers expired without the state cookie, and once ten minutes have passed", async () => {
    expect(reasonOf(await browserOf(h).get("/v1/auth/oauth/oidc/callback?code=x&state=y"))).toBe("expired");
    const browser = browserOf(h);
    const callback = await throughProvider(browser, "oidc");
    h.clock.advance(10 * 60_000 + 1);
    try {
      expect(reasonOf(await browser.get(callback))).toBe("expired");
    } finally {
      h.clock.advance(-(10 * 60_000 + 1));
    }
    expect(await browser.cookie("rt_session")).toBeUndefined();
  });

  it("answers state_mismatch for another state, a tampered cookie, or another provider's cookie", async () => {
    const browser = browserOf(h);
    await browser.get("/v1/auth/oauth/oidc/start");
    expect(reasonOf(await browser.get("/v1/auth/oauth/oidc/callback?code=x&state=not-the-state"))).toBe("state_mismatch");

    const tampered = browserOf(h);
    const start = await tampered.get("/v1/auth/oauth/oidc/start");
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    await tampered.jar.setCookie(`rt_oauth=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..forged.forged.forged; Path=/v1/auth/oauth`, h.url);
    expect(reasonOf(await tampered.get(`/v1/auth/oauth/oidc/callback?code=x&state=${state}`))).toBe("state_mismatch");

    const crossed = browserOf(h);
    const google = await crossed.get("/v1/auth/oauth/google/start");
    const googleState = new URL(google.headers.get("location")!).searchParams.get("state")!;
    expect(reasonOf(await crossed.get(`/v1/auth/oauth/oidc/callback?code=x&state=${googleState}`))).toBe("state_mismatch");
  });

  it("answers no_code when the provider sent the browser back without a code", async () => {
    const browser = browserOf(h);
    const start = await browser.get("/v1/auth/oauth/oidc/start");
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    expect(reasonOf(await browser.get(`/v1/auth/oauth/oidc/callback?state=${state}`))).toBe("no_code");
  });

  it("answers exchange_failed when the provider refuses the code exchange (a forged code, a wrong client secret)", async () => {
    const browser = browserOf(h);
    const start = await browser.get("/v1/auth/oauth/oidc/start");
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    expect(reasonOf(await browser.get(`/v1/auth/oauth/oidc/callback?code=forged&state=${state}`))).toBe("exchange_failed");

    const wrongSecret = browserOf(h);
    expect(reasonOf(await wrongSecret.get(await throughProvider(wrongSecret, "google")))).toBe("exchange_failed");
    expect(await wrongSecret.cookie("rt_session")).toBeUndefined();
  });

  it("lists the configured providers among the sign-in methods", async () => {
    const res = await browserOf(h).get("/v1/auth/methods");
    expect(res.body.data).toEqual({ management_key: true, oauth: ["google", "oidc"], wallet: true });
  });
});

describe("a provider that cannot be reached", () => {
  it("answers provider_error at start, and nothing is offered when none is configured", async () => {
    const closed = await freePort();
    const down = await startHarness("gw_oauth_down", {
      oauthProviders: { oidc: { issuer: `http://127.0.0.1:${closed}`, clientId: "x", clientSecret: "y" } },
      walletSignIn: false,
    });
    try {
      expect(reasonOf(await browserOf(down).get("/v1/auth/oauth/oidc/start"))).toBe("provider_error");
      expect((await browserOf(down).get("/v1/auth/methods")).body.data).toEqual({ management_key: true, oauth: ["oidc"], wallet: false });
    } finally {
      await down.close();
    }
  });
});
