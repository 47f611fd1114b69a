import { Wallet, type HDNodeWallet } from "ethers";
import { SiweMessage } from "siwe";
import { Browser } from "@router/testkit";
import { perMinute } from "../../src/rate-limits/limits";
import { browserOf, startHarness, type Harness } from "../harness";

/** Wallet sign-in with real Sign-In with Ethereum messages signed by real keys (ethers). */
let h: Harness;

beforeAll(async () => {
  h = await startHarness("gw_wallet", { rateLimits: { wallet_challenge: [perMinute(10_000)] } });
});

afterAll(async () => {
  await h.close();
});

async function challenge(browser: Browser, address: string) {
  const res = await browser.post("/v1/auth/wallet/challenge", { address });
  expect(res.status).toBe(200);
  return res.body.data as { message: string; nonce: string; expires_at: string };
}

async function signIn(browser: Browser, wallet: Wallet | HDNodeWallet) {
  const c = await challenge(browser, wallet.address);
  return browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(c.message), nonce: c.nonce });
}

describe("wallet sign-in", () => {
  it("issues an EIP-4361 message for the address, valid five minutes", async () => {
    const wallet = Wallet.createRandom();
    const c = await challenge(browserOf(h), wallet.address.toLowerCase());
    const parsed = new SiweMessage(c.message);
    expect(parsed.address).toBe(wallet.address);
    expect(parsed.domain).toBe(new URL(h.url).host);
    expect(parsed.uri).toBe(h.url);
    expect(parsed.chainId).toBe(1);
    expect(parsed.nonce).toBe(c.nonce);
    expect(parsed.issuedAt).toBe("2026-11-21T10:00:00.000Z");
    expect(c.expires_at).toBe("2026-11-21T10:05:00.000Z");
    expect(parsed.expirationTime).toBe(c.expires_at);
  });

  it("signs a new person in with a signature of the challenge; the second time they are known", async () => {
    const wallet = Wallet.createRandom();
    const browser = browserOf(h);
    const first = await signIn(browser, wallet);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ expires_at: expect.stringMatching(/Z$/), org_id: expect.stringMatching(/^org_/), is_new_user: true });
    expect(await browser.cookie("rt_session")).toBeTruthy();
    expect(await browser.cookie("rt_csrf")).toBeTruthy();
    const session = await browser.get("/v1/auth/session");
    expect(session.body.data).toMatchObject({ org_id: first.body.data.org_id, auth_method: "wallet", user: { provider: "wallet" } });
    expect((await browser.get("/v1/keys")).status).toBe(200);
    expect((await browser.post("/v1/workspaces", { name: "Mine" })).status).toBe(201);

    const again = await signIn(browserOf(h), wallet);
    expect(again.body.data).toMatchObject({ org_id: first.body.data.org_id, is_new_user: false });
  });

  it("is one person however the address is written", async () => {
    const wallet = Wallet.createRandom();
    const checksummed = await signIn(browserOf(h), wallet);
    const browser = browserOf(h);
    const c = await challenge(browser, wallet.address.toLowerCase());
    const lower = await browser.post("/v1/auth/wallet/verify", {
      address: wallet.address.toLowerCase(),
      signature: await wallet.signMessage(c.message),
      nonce: c.nonce,
    });
    expect(lower.status).toBe(200);
    expect(lower.body.data).toMatchObject({ org_id: checksummed.body.data.org_id, is_new_user: false });
  });

  it("uses a nonce once, even when the signature was wrong", async () => {
    const wallet = Wallet.createRandom();
    const browser = browserOf(h);
    const c = await challenge(browser, wallet.address);
    const wrong = await Wallet.createRandom().signMessage(c.message);
    const bad = await browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: wrong, nonce: c.nonce });
    expect(bad.status).toBe(401);
    expect(bad.body.error.details.field).toBe("signature");
    const good = await browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(c.message), nonce: c.nonce });
    expect(good.status).toBe(401);
    expect(good.body.error.details.field).toBe("nonce");
    expect(await browser.cookie("rt_session")).toBeUndefined();
  });

  it("refuses an expired challenge, another address's nonce and a message other than the challenge", async () => {
    const wallet = Wallet.createRandom();
    const browser = browserOf(h);
    const late = await challenge(browser, wallet.address);
    h.clock.advance(5 * 60_000);
    try {
      const res = await browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(late.message), nonce: late.nonce });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/expired/);
    } finally {
      h.clock.advance(-5 * 60_000);
    }

    const other = Wallet.createRandom();
    const theirs = await challenge(browser, other.address);
    const stolen = await browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(theirs.message), nonce: theirs.nonce });
    expect(stolen.status).toBe(401);
    expect(stolen.body.error.details.field).toBe("address");

    const mine = await challenge(browser, wallet.address);
    const otherText = await wallet.signMessage(mine.message.replace("Sign in to Router", "Send all my tokens"));
    const forged = await browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: otherText, nonce: mine.nonce });
    expect(forged.status).toBe(401);
    expect(forged.body.error.details.field).toBe("signature");
  });

  it.each([
    ["/v1/auth/wallet/challenge", { address: "0x1234" }, "address"],
    ["/v1/auth/wallet/challenge", {}, "address"],
    // ethers would take an address without its 0x: refused, so one wallet cannot become two people
    ["/v1/auth/wallet/challenge", { address: "52908400098527886e0f7030069857d2e4169ee7" }, "address"],
    // mixed case with a broken EIP-55 checksum (the valid form is 0x52908400098527886E0F7030069857D2E4169EE7)
    ["/v1/auth/wallet/challenge", { address: "0x52908400098527886E0F7030069857D2E4169Ee7" }, "address"],
    ["/v1/auth/wallet/verify", { address: "not an address", signature: `0x${"1".repeat(130)}`, nonce: "abcdefgh1234" }, "address"],
    ["/v1/auth/wallet/verify", { address: Wallet.createRandom().address, signature: "0x12", nonce: "abcdefgh1234" }, "signature"],
    ["/v1/auth/wallet/verify", { address: Wallet.createRandom().address, signature: `0x${"1".repeat(130)}` }, "nonce"],
  ])("refuses malformed input at %s (%#) naming the field", async (path, body, field) => {
    const res = await browserOf(h).post(path, body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
  });
});

describe("a deployment without wallet sign-in", () => {
  it("says so in the methods and answers 404 on its routes", async () => {
    const off = await startHarness("gw_wallet_off", { walletSignIn: false });
    try {
      const browser = browserOf(off);
      expect((await browser.get("/v1/auth/methods")).body.data).toEqual({ management_key: true, oauth: [], wallet: false });
      expect((await browser.post("/v1/auth/wallet/challenge", { address: Wallet.createRandom().address })).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
