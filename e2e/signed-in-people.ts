import { Wallet, type HDNodeWallet } from "ethers";
import { Browser, gatewayClient } from "@router/testkit";

/**
 * People of the end-to-end stacks, signed in the way a person signs in (Sign-In with Ethereum, a
 * real signature) into a browser-like cookie jar of their own.
 */

/** A person signing in for the first time with `wallet`: their own organisation and a session. */
export async function walletPerson(gatewayUrl: string, wallet: HDNodeWallet = Wallet.createRandom()): Promise<Browser> {
  const browser = new Browser(gatewayUrl);
  const challenge = await browser.post("/v1/auth/wallet/challenge", { address: wallet.address });
  expect(challenge.status).toBe(200);
  const { message, nonce } = challenge.body.data as { message: string; nonce: string };
  const verified = await browser.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(message), nonce });
  expect(verified.status).toBe(200);
  expect(verified.body.data.is_new_user).toBe(true);
  return browser;
}

/**
 * A seat with `role` (the roles the API assigns) in `org`, invited with its management key and
 * accepted by a newly signed-in person, whose session then acts in `org`.
 */
export async function seatedPerson(
  gatewayUrl: string,
  org: { orgId: string; managementKey: string },
  role: "owner" | "member" | "billing",
  wallet?: HDNodeWallet,
): Promise<Browser> {
  const invited = await gatewayClient(gatewayUrl, org.managementKey).post("/v1/organization/invitations", { role });
  expect(invited.status).toBe(201);
  const token = String(invited.json.data.url).split("#token=")[1];
  const browser = await walletPerson(gatewayUrl, wallet);
  const accepted = await browser.post("/v1/invitations/accept", { token });
  expect(accepted.status).toBe(200);
  expect(accepted.body.data).toEqual({ org_id: org.orgId });
  return browser;
}

/** The user id of the person signed in to `browser`, as the member list names them. */
export async function userIdOf(browser: Browser): Promise<string> {
  const me = await browser.get("/v1/organization/members");
  expect(me.status).toBe(200);
  return me.body.data.find((m: { is_you: boolean }) => m.is_you).user_id as string;
}
