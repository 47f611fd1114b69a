import type { IdentitySigningKey } from "@router/http-kit";
import { GATEWAY, MANAGEMENT_ROUTES, OWNED_FAMILIES } from "@router/management-api";
import express, { type RequestHandler } from "express";
import type { Authenticate } from "../src/auth/authenticate";
import type { IdentityDirectory } from "../src/console/console-port";
import type { Manage } from "../src/auth/management-auth";
import { servedRoutes } from "../src/meta/served-routes";
import { proxyExtras, proxyRoutes, type ProxyRoutesDeps } from "../src/proxy/proxy-routes";
import type { UpstreamProxy } from "../src/proxy/upstream-proxy";

const pass: RequestHandler = (_req, _res, next) => next();

/** Dependencies that are never called: the table is read from the router, no request is made. */
function idleDeps(): ProxyRoutesDeps {
  const url = "http://127.0.0.1:9";
  return {
    identity: {} as IdentityDirectory,
    authenticate: (() => pass) as unknown as Authenticate,
    manage: (() => pass) as unknown as Manage,
    proxy: {} as UpstreamProxy,
    identityKey: {} as IdentitySigningKey,
    activityUrl: url,
    alertsUrl: url,
    routingUrl: url,
    ledgerUrl: url,
    reportsUrl: url,
    broadcastUrl: url,
    runawayUrl: url,
    consoleUrl: url,
    catalogLimit: pass,
    creditFeesLimit: pass,
    paymentEventsLimit: pass,
    exportLimit: pass,
    uptimeLimit: pass,
    signInLimits: { authExchange: pass, invitationLookup: pass, pkce: pass, walletChallenge: pass },
  };
}

describe("the gateway's forwarding table", () => {
  const app = express();
  app.use(proxyRoutes(idleDeps()));
  const table = servedRoutes(app).map((r) => `${r.method.toUpperCase()} ${r.path}`);

  it("is the forwarded descriptions, in order, then the families their owners hold whole", () => {
    const described = MANAGEMENT_ROUTES.filter((r) => r.serving === "forwarded").map((r) => r.key);
    const families = OWNED_FAMILIES.flatMap((f) => f.paths.map((p) => `ALL ${p}`));
    expect(table).toEqual([...described, ...families]);
  });

  it("forwards no route the gateway composes itself", () => {
    const composed = MANAGEMENT_ROUTES.filter((r) => r.serving === "composed").map((r) => r.key);
    expect(composed).toEqual(["GET /v1/alerts/runaway"]);
    for (const key of composed) expect(table).not.toContain(key);
  });

  it("describes no management route the gateway serves itself: the data plane owns none", () => {
    expect(MANAGEMENT_ROUTES.filter((r) => r.owner === GATEWAY).map((r) => r.key)).toEqual([]);
  });

  it("keys every extra by a description or a family", () => {
    const known = new Set([...MANAGEMENT_ROUTES.map((r) => r.key), ...OWNED_FAMILIES.map((f) => f.paths[0])]);
    expect(Object.keys(proxyExtras(idleDeps())).filter((key) => !known.has(key))).toEqual([]);
  });
});
