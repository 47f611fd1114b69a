import { Router, type Request, type Response } from "express";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { signInPerson } from "../people/person-sign-in";
import { cookieOptions, cookiesOf } from "@router/http-kit";
import type { SessionIssuer } from "../sessions/session-issuer";
import type { OAuthClients } from "./oauth-providers";
import { OAUTH_COOKIE, OAUTH_STATE_TTL_MS, openOAuthState, sealOAuthState } from "./oauth-state-cookie";

export interface OAuthRoutesDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  clients: OAuthClients;
  issuer: SessionIssuer;
  /** Keys the `rt_oauth` cookie (ROUTER_INTERNAL_SECRET). */
  secret: string;
  /** The deployment's public base URL: the dashboard pages the browser lands on. */
  publicUrl: () => string;
}

/** The product's reasons a sign-in did not happen, shown on `/signin?error=<reason>`. */
export type SignInFailure = "cancelled" | "provider_error" | "expired" | "state_mismatch" | "no_code" | "not_configured" | "exchange_failed";

const COOKIE_PATH = "/v1/auth/oauth";

/**
 * Identity-provider sign-in (OpenID Connect, code flow with PKCE): start redirects to the provider
 * with a sealed `rt_oauth` cookie; the callback always redirects, to `/workspace` with a session or
 * to `/signin?error=<reason>`.
 */
export function oauthRoutes(deps: OAuthRoutesDeps): Router {
  const router = Router();
  const page = (path: string) => `${deps.publicUrl()}${path}`;
  const fail = (res: Response, reason: SignInFailure) => res.redirect(302, page(`/signin?error=${reason}`));
  const param = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);

  router.get("/v1/auth/oauth/:provider/start", async (req: Request, res: Response) => {
    const slug = String(req.params.provider);
    if (!deps.clients.isConfigured(slug)) return fail(res, "not_configured");
    let started: Awaited<ReturnType<OAuthClients["start"]>>;
    try {
      started = await deps.clients.start(slug);
    } catch (err) {
      deps.log.warn({ err, provider: slug }, "console.sign_in.start_failed");
      return fail(res, "provider_error");
    }
    const sealed = await sealOAuthState({ ...started.attempt, provider: slug, startedAtMs: deps.clock.now().getTime() }, deps.secret);
    res.cookie(OAUTH_COOKIE, sealed, { ...cookieOptions(req, { httpOnly: true }), path: COOKIE_PATH, maxAge: OAUTH_STATE_TTL_MS });
    res.redirect(302, started.url);
  });

  router.get("/v1/auth/oauth/:provider/callback", async (req: Request, res: Response) => {
    const slug = String(req.params.provider);
    // One attempt per cookie, whatever happens next.
    res.clearCookie(OAUTH_COOKIE, { ...cookieOptions(req, { httpOnly: true }), path: COOKIE_PATH });
    if (!deps.clients.isConfigured(slug)) return fail(res, "not_configured");
    const error = param(req.query.error);
    if (error) return fail(res, error === "access_denied" ? "cancelled" : "provider_error");
    const sealed = cookiesOf(req)[OAUTH_COOKIE];
    if (!sealed) return fail(res, "expired");
    const state = await openOAuthState(sealed, deps.secret);
    if (!state || state.provider !== slug || state.state !== param(req.query.state)) return fail(res, "state_mismatch");
    if (deps.clock.now().getTime() - state.startedAtMs > OAUTH_STATE_TTL_MS) return fail(res, "expired");
    const code = param(req.query.code);
    if (!code) return fail(res, "no_code");

    let profile: Awaited<ReturnType<OAuthClients["finish"]>>;
    try {
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.query)) if (typeof value === "string") params[name] = value;
      profile = await deps.clients.finish(slug, { ...params, code }, state);
    } catch (err) {
      deps.log.warn({ err, provider: slug }, "console.sign_in.exchange_failed");
      return fail(res, "exchange_failed");
    }
    const { issued, isNewUser } = await deps.db.tx(async (q) => {
      const person = await signInPerson(q, { provider: slug, ...profile }, deps.clock.now());
      const session = await deps.issuer.issue(q, { orgId: person.orgId, userId: person.user.id, keyHash: null, authMethod: "oauth" });
      return { issued: session, isNewUser: person.isNewUser };
    });
    deps.issuer.send(req, res, issued);
    res.redirect(302, page(isNewUser ? "/workspace?welcome=1" : "/workspace"));
  });

  return router;
}
