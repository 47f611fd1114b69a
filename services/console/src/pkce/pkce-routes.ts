import { Router, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { sessions } from "@router/management-api";
import { fromUsd, toUsd, type Clock } from "@router/money";
import { requirePrincipal, type Authorize } from "../auth/principal";
import { objectBody } from "@router/http-kit";
import { mintKey } from "@router/api-keys";
import { insertKey } from "../keys/key-store";
import { defaultWorkspaceOf } from "../organisations/organisation-store";
import { consumePkceCode, insertPkceCode } from "./pkce-codes";
import { parsePkceRequest, PKCE_METHOD, PKCE_REQUEST_FIELDS, redirectWithCode, verifierMatches } from "./pkce-request";

/** Spend ceiling (USD) and lifetime (days) of a key issued through PKCE, unless the deployment sets them. */
export const DEFAULT_PKCE_KEY_LIMIT_USD = 10;
export const DEFAULT_PKCE_KEY_DAYS = 30;

export interface PkceRoutesDeps {
  db: Db;
  authorize: Authorize;
  pepper: string;
  clock: Clock;
  /** Hard lifetime spend ceiling of every issued key, USD (CONSOLE_PKCE_KEY_LIMIT_USD). */
  keyLimitUsd: number;
  /** Lifetime of every issued key, days from its exchange (CONSOLE_PKCE_KEY_DAYS). */
  keyDays: number;
}

/** Where an app exchanges its code for a key; the gateway answers its CORS (any origin). */
export const PKCE_EXCHANGE_PATH = "/v1/auth/keys";

const EXCHANGE_FIELDS = Object.keys(sessions.pkceExchangeBody.shape);

const DAY_MS = 24 * 3600_000;

/**
 * OAuth PKCE app keys (RFC 7636, S256 only): describe a request for the consent screen, approve it
 * (a one-time code, ten minutes), exchange the code and its verifier for an inference key with a
 * hard lifetime ceiling and an expiry.
 */
export function pkceRoutes(deps: PkceRoutesDeps): Router {
  const router = Router();
  const limitNanos = fromUsd(deps.keyLimitUsd);

  router.get("/v1/auth/pkce", (req: Request, res: Response) => {
    const request = parsePkceRequest(req.query, "query");
    res.json({
      data: {
        callback_url: request.callbackUrl,
        host: request.host,
        headless: request.headless,
        key_label: request.keyLabel,
        code_challenge_method: PKCE_METHOD,
        limit: toUsd(limitNanos),
        expires_in_days: deps.keyDays,
      },
    });
  });

  router.post("/v1/auth/pkce/approve", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const principal = requirePrincipal(res);
    const request = parsePkceRequest(objectBody(req, PKCE_REQUEST_FIELDS), "body");
    const workspaceId = principal.workspaceId ?? (await defaultWorkspaceOf(deps.db, principal.orgId));
    const { code, expiresAt } = await insertPkceCode(
      deps.db,
      {
        orgId: principal.orgId,
        userId: principal.userId,
        workspaceId,
        callbackUrl: request.callbackUrl,
        codeChallenge: request.codeChallenge,
        keyLabel: request.keyLabel,
        limitNanos,
        expiresInDays: deps.keyDays,
      },
      deps.clock.now(),
    );
    res.json({
      data: {
        code,
        redirect_to: request.callbackUrl === null ? null : redirectWithCode(request.callbackUrl, code),
        expires_at: expiresAt.toISOString(),
      },
    });
  });

  router.post(PKCE_EXCHANGE_PATH, async (req: Request, res: Response) => {
    const body = parseInput(sessions.pkceExchangeBody, objectBody(req, EXCHANGE_FIELDS));
    const now = deps.clock.now();
    // Consumed here, before the verifier is checked: a code gets one attempt.
    const approved = await consumePkceCode(deps.db, body.code, now);
    if (!approved) throw invalid("code", "unknown, already used or expired");
    if (!verifierMatches(body.code_verifier, approved.codeChallenge)) {
      throw invalid("code_verifier", "does not match the code_challenge of the approval; the code is spent, start again");
    }
    const workspaceId = approved.workspaceId ?? (await defaultWorkspaceOf(deps.db, approved.orgId));
    const minted = mintKey("inference", deps.pepper);
    const expiresAt = new Date(now.getTime() + approved.expiresInDays * DAY_MS);
    await insertKey(
      deps.db,
      approved.orgId,
      minted,
      {
        name: approved.keyLabel,
        label: approved.keyLabel,
        workspaceId,
        limitNanos: approved.limitNanos,
        limitReset: "lifetime",
        limitMode: "hard",
        // Every model is BYOK-only: a ceiling that left BYOK spend out would count nothing.
        includeByokInLimit: true,
        expiresAt,
        // The person who approved the consent: the key is theirs, and so are its guardrails.
        userId: approved.userId,
      },
      now,
    );
    res.json({
      data: {
        key: minted.plaintext,
        hash: minted.hash,
        label: approved.keyLabel,
        limit: toUsd(approved.limitNanos),
        expires_at: expiresAt.toISOString(),
      },
    });
  });

  return router;
}
