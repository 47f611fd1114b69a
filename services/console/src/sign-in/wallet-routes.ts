import { Router, type Request, type RequestHandler, type Response } from "express";
import type * as Ethers from "ethers";
import type * as Siwe from "siwe";
import type { Db } from "@router/db";
import { DomainError, notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { sessions } from "@router/management-api";
import type { Clock } from "@router/money";
import { objectBody } from "@router/http-kit";
import { signInPerson } from "../people/person-sign-in";
import type { SessionIssuer } from "../sessions/session-issuer";
import { consumeChallenge, insertChallenge, WALLET_CHALLENGE_TTL_MS } from "./wallet-challenges";

export interface WalletRoutesDeps {
  db: Db;
  clock: Clock;
  issuer: SessionIssuer;
  /** The deployment's public base URL: the SIWE message's domain and URI. */
  publicUrl: () => string;
  /** Whether this deployment offers wallet sign-in (CONSOLE_WALLET_SIGNIN). */
  enabled: boolean;
}

/**
 * ethers and siwe are large (about 10 MB of heap) and only wallet sign-in needs them: loaded on its
 * first use, so a deployment that never offers it never pays for them.
 */
let walletLibraries: { ethers: typeof Ethers; siwe: typeof Siwe } | undefined;
function wallet(): { ethers: typeof Ethers; siwe: typeof Siwe } {
  /* eslint-disable @typescript-eslint/no-require-imports */
  walletLibraries ??= { ethers: require("ethers") as typeof Ethers, siwe: require("siwe") as typeof Siwe };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return walletLibraries;
}

/**
 * The description's bodies (@router/management-api), with the EIP-55 checksum of a mixed-case
 * address checked by ethers (which alone would also take an address without `0x`).
 */
const bodies = sessions.walletBodies((a) => wallet().ethers.isAddress(a));

function refused(field: string, message: string): DomainError {
  return new DomainError("unauthorized", `${field}: ${message}`, { details: { field } });
}

/**
 * Wallet sign-in with Sign-In with Ethereum (EIP-4361, the `siwe` library): a challenge message
 * for the address (five minutes, single-use nonce), then the signed message verified by the library
 * against the stored one; the person is the address.
 */
export function walletRoutes(deps: WalletRoutesDeps): Router {
  const router = Router();
  const offered: RequestHandler = (_req, _res, next) => {
    if (!deps.enabled) throw notFound("wallet sign-in (not offered by this deployment)");
    next();
  };

  router.post("/v1/auth/wallet/challenge", offered, async (req: Request, res: Response) => {
    const body = parseInput(bodies.challenge, objectBody(req, ["address"]));
    const now = deps.clock.now();
    const expiresAt = new Date(now.getTime() + WALLET_CHALLENGE_TTL_MS);
    const site = new URL(deps.publicUrl());
    const { ethers, siwe } = wallet();
    const nonce = siwe.generateNonce();
    const message = new siwe.SiweMessage({
      domain: site.host,
      address: ethers.getAddress(body.address),
      statement: "Sign in to Router",
      uri: site.origin,
      version: "1",
      chainId: 1,
      nonce,
      issuedAt: now.toISOString(),
      expirationTime: expiresAt.toISOString(),
    }).prepareMessage();
    await insertChallenge(deps.db, { nonce, address: body.address, message, expiresAt }, now);
    res.json({ data: { message, nonce, expires_at: expiresAt.toISOString() } });
  });

  router.post("/v1/auth/wallet/verify", offered, async (req: Request, res: Response) => {
    const body = parseInput(bodies.verify, objectBody(req, ["address", "signature", "nonce"]));
    const now = deps.clock.now();
    const challenge = await consumeChallenge(deps.db, body.nonce, now);
    if (!challenge) throw refused("nonce", "unknown or already used; ask for a new challenge");
    if (challenge.expiresAt.getTime() <= now.getTime()) throw refused("nonce", "the challenge expired; ask for a new one");
    if (challenge.address !== body.address) throw refused("address", "the challenge was issued to another address");
    const { ethers, siwe } = wallet();
    const verified = await new siwe.SiweMessage(challenge.message)
      .verify({ signature: body.signature, nonce: challenge.nonce, domain: new URL(deps.publicUrl()).host, time: now.toISOString() }, { suppressExceptions: true })
      .catch(() => ({ success: false }));
    if (!verified.success) throw refused("signature", "does not sign the challenge with this address's key");

    const { issued, isNewUser } = await deps.db.tx(async (q) => {
      const person = await signInPerson(
        q,
        { provider: "wallet", subject: challenge.address, name: `${ethers.getAddress(challenge.address).slice(0, 6)}…${challenge.address.slice(-4)}` },
        now,
      );
      const session = await deps.issuer.issue(q, { orgId: person.orgId, userId: person.user.id, keyHash: null, authMethod: "wallet" });
      return { issued: session, isNewUser: person.isNewUser };
    });
    deps.issuer.send(req, res, issued);
    res.json({ data: { expires_at: issued.expiresAt.toISOString(), org_id: issued.orgId, is_new_user: isNewUser } });
  });

  return router;
}
