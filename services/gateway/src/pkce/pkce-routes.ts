import { Router, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { Db } from "@router/db";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { sessions } from "@router/management-api";
import { fromUsd, toUsd, type Clock } from "@router/money";
import type { Manage } from "../auth/management-auth";
import { requirePrincipal } from "../auth/principal";
import { objectBody } from "@router/http-kit";
import { mintKey } from "../keys/key-secret";
import { insertKey } from "../keys/key-store";
import { defaultWorkspaceOf } from "../organisations/organisation-store";
import { consumePkceCode, insertPkceCode } from "./pkce-codes";
import { parsePkceRequest, PKCE_METHOD, PKCE_REQUEST_FIELDS, redirectWithCode, verifierMatches } from "./pkce-request";

/** Spend ceiling (USD) and lifetime (days) of a key issued through PKCE, unless the deployment sets them. */
export const DEFAULT_PKCE_KEY_LIMIT_USD = 10;
export const DEFAULT_PKCE_KEY_DAYS = 30;

export interface PkceRoutesDeps {
  db: Db;
  manage: Manage;
  pepper: string;
  clock: Clock;
  /** Per-client-address limit on the two public routes. */
  publicLimit: RequestHandler;
  /** Hard lifetime spend ceiling of every issued key, USD (GATEWAY_PKCE_KEY_LIMIT_USD). */
  keyLimitUsd: number;
  /** Lifetime of every issued key, days from its exchange (GATEWAY_PKCE_KEY_DAYS). */
  keyDays: number;
}

export const PKCE_EXCHANGE_PATH = "/v1/auth/keys";

const EXCHANGE_FIELDS = Object.keys(sessions.pkceExchangeBody.shape);

const DAY_MS = 24 * 3600_000;

/**
 * CORS of the exchange, the one route an app's own web page calls: any origin, never credentials
 * (the route reads no cookie and no Authorization header, and a wildcard with credentials would be
 * refused by browsers anyway). Set by hand rather than through the `cors` package: three fixed
 * headers on one route. Errors thrown later keep them (writeHead merges headers already set), so a
 * page can read why its exchange was refused.
 */
function anyOrigin(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  next();
}

function exchangePreflight(_req: Request, res: Response): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Allow-Methods", "POST");
  res.setHeader("Access-Control-Allow-Headers", "content-type");
  res.setHeader("Access-Control-Max-Age", "600");
  res.status(204).end();
}

/**
 * OAuth PKCE app keys (RFC 7636, S256 only): describe a request for the consent screen, approve it
 * (a one-time code, ten minutes), exchange the code and its verifier for an inference key with a
 * hard lifetime ceiling and an expiry.
 */
export function pkceRoutes(deps: PkceRoutesDeps): Router {
  const router = Router();
  const limitNanos = fromUsd(deps.keyLimitUsd);

  router.get("/v1/auth/pkce", deps.publicLimit, (req: Request, res: Response) => {
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

  router.post("/v1/auth/pkce/approve", deps.manage("config:write"), async (req: Request, res: Response) => {
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

  router.options(PKCE_EXCHANGE_PATH, exchangePreflight);
  router.post(PKCE_EXCHANGE_PATH, anyOrigin, deps.publicLimit, async (req: Request, res: Response) => {
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
