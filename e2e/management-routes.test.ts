import { CONSOLE_PAGES, GATEWAY, MANAGEMENT_ROUTES, OWNED_FAMILIES, type Owner } from "@router/management-api";
import { ManualClock } from "@router/money";
import { newIdentityKeys } from "@router/testkit";
import type { Express } from "express";
import { startActivityHarness } from "../services/activity/test/activity-harness";
import { startAlertsHarness } from "../services/alerts/test/alerts-harness";
import { startBroadcastHarness } from "../services/broadcast/test/broadcast-harness";
import { startHarness as startGatewayHarness } from "../services/gateway/test/harness";
import { startTestLedger } from "../services/ledger/test/ledger-fixture";
import { startReportsHarness } from "../services/reports/test/reports-harness";
import { startHarness as startRoutingHarness } from "../services/routing/test/routing-harness";
import { startRunawayHarness } from "../services/runaway/test/runaway-harness";
import { startConsoleHarness } from "../services/console/test/console-harness";

/*
 * "The description covers every route": each owning service is started as its own tests start it,
 * the express apps it builds are caught as they are made, and their router stacks are read. Every
 * /v1 route an owner serves must be described with that owner, and every description's owner must
 * serve it (path and method).
 */

const apps: Express[] = [];
jest.mock("express", () => {
  const actual = jest.requireActual<typeof import("express")>("express");
  const caught = (...args: Parameters<typeof actual>) => {
    const app = actual(...args);
    apps.push(app);
    return app;
  };
  return Object.assign(caught, actual);
});

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/**
 * `METHOD /path` for every route of the stack, routers mounted at the root included. A route made
 * with `.route(path).all(check).get(...).put(...)` answers its methods, not every one.
 */
function routeKeys(stack: readonly Layer[], out: string[] = []): string[] {
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      const named = Object.keys(layer.route.methods).filter((m) => m !== "_all" && layer.route?.methods[m]);
      const methods = named.length > 0 ? named : ["all"];
      for (const path of paths) for (const method of methods) out.push(`${method.toUpperCase()} ${path}`);
    } else if (layer.handle?.stack) {
      routeKeys(layer.handle.stack, out);
    }
  }
  return out;
}

/** The /v1 routes of the apps `start` builds, then closes what it started. */
async function servedBy(start: () => Promise<{ close(): Promise<void> }>): Promise<string[]> {
  const before = apps.length;
  const running = await start();
  try {
    const built = apps.slice(before);
    return [...new Set(built.flatMap((app) => routeKeys((app.router as unknown as { stack: Layer[] }).stack)))].filter((k) => k.split(" ")[1]?.startsWith("/v1/"));
  } finally {
    await running.close();
  }
}

const clock = () => new ManualClock(new Date("2026-11-15T12:00:00.000Z"));

const OWNERS: Record<Owner, () => Promise<{ close(): Promise<void> }>> = {
  activity: () => startActivityHarness("mgmtroutes_activity", clock()),
  // Routing serves its management routes only with the keys that verify the gateway's identity.
  routing: () => startRoutingHarness({ identityKeys: newIdentityKeys().publicKeys }),
  ledger: () => startTestLedger({ label: "mgmtroutes_ledger" }),
  reports: () => startReportsHarness("mgmtroutes_reports", clock()),
  alerts: () => startAlertsHarness("mgmtroutes_alerts"),
  broadcast: () => startBroadcastHarness("mgmtroutes_broadcast", clock()),
  runaway: () => startRunawayHarness("mgmtroutes_runaway", clock()),
  console: () => startConsoleHarness("mgmtroutes_console"),
};

describe("the management route descriptions", () => {
  const served = new Map<Owner, string[]>();
  beforeAll(async () => {
    for (const [owner, start] of Object.entries(OWNERS) as Array<[Owner, () => Promise<{ close(): Promise<void> }>]>) {
      served.set(owner, await servedBy(start));
    }
  }, 120_000);

  it.each(Object.keys(OWNERS) as Owner[])("describe every /v1 route %s serves, and only routes it serves", (owner) => {
    // The console's pages for browsers (the OAuth sign-in's redirects) are described as pages, not API routes.
    const routes = (served.get(owner) ?? []).filter((k) => !(owner === "console" && CONSOLE_PAGE_KEYS.includes(k)));
    const described = MANAGEMENT_ROUTES.filter((r) => r.owner === owner).map((r) => r.key);
    expect(routes.length).toBeGreaterThan(0);
    expect({ owner, undescribed: routes.filter((k) => !described.includes(k)) }).toEqual({ owner, undescribed: [] });
    expect({ owner, notServed: described.filter((k) => !routes.includes(k)) }).toEqual({ owner, notServed: [] });
  });

  it("give each family to an owner that serves a route under it", () => {
    for (const family of OWNED_FAMILIES) {
      const prefix = family.paths[0] ?? "";
      const routes = served.get(family.owner) ?? [];
      expect([prefix, routes.some((k) => k.split(" ")[1]?.startsWith(prefix))]).toEqual([prefix, true]);
    }
  });
});

/** The console's pages for browsers, as route keys: the gateway forwards them, the console serves them. */
const CONSOLE_PAGE_KEYS = CONSOLE_PAGES.flatMap((page) => page.paths.map((path) => `${page.method.toUpperCase()} ${path}`));

/**
 * The /v1 routes the gateway serves that are no management route: the inference API's (its
 * request formats are mounted as middleware, not read here), diagnostics, and a CORS preflight.
 */
const GATEWAY_NOT_MANAGEMENT = [
  "POST /v1/messages/count_tokens",
  "POST /v1/responses/input_tokens",
  "GET /v1/responses/:id",
  "GET /v1/responses/:id/input_items",
  "DELETE /v1/responses/:id",
  "POST /v1/routing/preview",
  "GET /v1/generation",
  "GET /v1/health",
  "GET /v1/region",
  "OPTIONS /v1/auth/keys",
];

describe("the descriptions of the gateway's own management routes", () => {
  let served: string[] = [];
  beforeAll(async () => {
    served = await servedBy(() => startGatewayHarness("mgmtroutes_gateway"));
  }, 120_000);

  it("serve no management route themselves: every /v1 route is forwarded to its owner, composed, or the data plane's", () => {
    // What it forwards (or composes) is described with its owner; families reach their owner whole.
    const others = new Set([
      ...MANAGEMENT_ROUTES.filter((r) => r.owner !== GATEWAY).map((r) => r.key),
      ...OWNED_FAMILIES.flatMap((f) => f.paths.map((p) => `ALL ${p}`)),
      ...CONSOLE_PAGE_KEYS,
      ...GATEWAY_NOT_MANAGEMENT,
    ]);
    expect({ undescribed: served.filter((k) => !others.has(k)) }).toEqual({ undescribed: [] });
    expect(MANAGEMENT_ROUTES.filter((r) => r.owner === GATEWAY).map((r) => r.key)).toEqual([]);
  });

  it("name no route of the gateway's that it does not serve", () => {
    expect(GATEWAY_NOT_MANAGEMENT.filter((k) => !served.includes(k))).toEqual([]);
  });
});
