import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { notFound } from "@router/errors";
import type { Logger } from "@router/logging";
import { cookiesOf, SESSION_COOKIE } from "@router/http-kit";
import { DASHBOARD_PAGES } from "@router/management-api";
import { CSP_REPORT_PATH } from "./csp-report-route";


/** Where `npm run build` puts the dashboard (services/console/dashboard/dist), next to this package's own dist. */
export const DEFAULT_DASHBOARD_DIR = join(__dirname, "..", "..", "dashboard", "dist");

const REPORT_GROUP = "csp";

/**
 * The pages' Content-Security-Policy: scripts, styles and requests from this origin only, no inline
 * script or style, never framed (the consent screen must not be clickjacked), violations reported
 * to this service's CSP report route (through the gateway) in both report formats.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  `report-uri ${CSP_REPORT_PATH}`,
  `report-to ${REPORT_GROUP}`,
].join("; ");

function securityHeaders(res: Response): void {
  res.setHeader("Content-Security-Policy", DASHBOARD_CSP);
  res.setHeader("Reporting-Endpoints", `${REPORT_GROUP}="${CSP_REPORT_PATH}"`);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  // Invitation tokens travel in the URL fragment, which is never sent; no Referer leaves either.
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
}

/**
 * Serves the built dashboard: its pages (one `index.html`, never cached), `/` as a redirect to
 * `/signin` (`/workspace` with a session cookie), and its hashed assets (cached for a year,
 * immutable). The dashboard talks to the public API like any client. A gateway started without a
 * build answers the pages with 503 and says how to build them.
 */
export function dashboardRoutes(deps: { dir?: string; log: Logger }): Router {
  const dir = deps.dir ?? DEFAULT_DASHBOARD_DIR;
  const indexPath = join(dir, "index.html");
  const index = existsSync(indexPath) ? readFileSync(indexPath) : undefined;
  if (!index) deps.log.warn({ dir }, "console.dashboard.not_built");
  const router = Router();

  // A person who opens the gateway's address (forwarded here with the cookie header) lands on the dashboard: the sign-in page, or with a
  // session cookie the workspace (which sends an ended session to sign in again).
  router.get("/", (req: Request, res: Response) => {
    res.setHeader("Cache-Control", "no-cache");
    res.redirect(302, cookiesOf(req)[SESSION_COOKIE] ? "/workspace" : "/signin");
  });

  router.get([...DASHBOARD_PAGES], (_req: Request, res: Response) => {
    securityHeaders(res);
    if (!index) {
      res.status(503).type("text/plain").send("The dashboard is not built: run `npm run build` (or `make build`) and restart.\n");
      return;
    }
    res.setHeader("Cache-Control", "no-cache");
    res.type("html").send(index);
  });

  const assets = express.static(join(dir, "assets"), { immutable: true, maxAge: "365d", index: false, dotfiles: "ignore" });
  router.get(
    "/assets/*file",
    (req: Request, res: Response, next: NextFunction) => {
      securityHeaders(res);
      // express.static reads the path relative to its mount; this router is mounted at the root.
      req.url = req.url.slice("/assets".length);
      void assets(req, res, next);
    },
    () => {
      throw notFound("asset");
    },
  );
  return router;
}
