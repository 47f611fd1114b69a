import { ROLE_PERMISSIONS } from "@router/access";
import { match } from "path-to-regexp";
import { MANAGEMENT_ROUTES, OWNED_FAMILIES, openApiPathOf, routing, ledger } from "../src";

const PERMISSIONS = new Set([...ROLE_PERMISSIONS.owner]);

describe("the management route descriptions", () => {
  it("name each method and path once", () => {
    const keys = MANAGEMENT_ROUTES.map((r) => r.key);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  it("give the OpenAPI form of each express path", () => {
    expect(openApiPathOf("/v1/agents/:agent/budgets/:interval")).toBe("/v1/agents/{agent}/budgets/{interval}");
    for (const r of MANAGEMENT_ROUTES) expect(r.openApiPath).not.toContain(":");
  });

  it("name a permission of the role table for every management route, and none where no role is read", () => {
    for (const r of MANAGEMENT_ROUTES) {
      if (r.access === "management" || r.access === "any") expect([r.key, r.permission !== null && PERMISSIONS.has(r.permission)]).toEqual([r.key, true]);
      if (r.access === "public" || r.access === "processor") expect([r.key, r.permission]).toEqual([r.key, null]);
    }
  });

  it("hold families that each cover a description of the same owner", () => {
    for (const family of OWNED_FAMILIES) {
      const matchers = family.paths.map((p) => match(p, { decode: false }));
      const covered = MANAGEMENT_ROUTES.filter((r) => r.owner === family.owner && matchers.some((m) => m(r.openApiPath.replace(/\{(\w+)\}/g, "x")) !== false));
      expect([family.paths[0], covered.length > 0]).toEqual([family.paths[0], true]);
    }
  });

  it("validate with the owners' rules and messages", () => {
    const bad = routing.guardrailBody.safeParse({ name: " " });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ["name"], message: "must not be empty" });
    expect(routing.privacyPolicyBody.parse({ regions: [" EU "] })).toEqual({ zdr: false, zdr_groups: [], deny_training: false, regions: ["eu"] });
    expect(ledger.workspaceBudgetBody.safeParse({ limit_usd: 5, extra: 1 }).success).toBe(false);
    expect(ledger.workspaceBudgetBody.parse({ limit_usd: 5 })).toEqual({ limit_usd: 5, include_byok: true });
  });

  it("describe answers that take what the owners send and refuse what they do not", () => {
    const row = { interval: "daily", limit_nanodollars: "5000000000", include_byok: true };
    const budgets = MANAGEMENT_ROUTES.find((r) => r.key === "GET /v1/workspaces/:id/budgets")?.answer;
    if (!budgets || budgets === "csv") throw new Error("the budgets route answers JSON");
    expect(budgets.safeParse({ data: [row], next_cursor: null }).success).toBe(true);
    expect(budgets.safeParse({ data: [{ ...row, interval: "hourly" }], next_cursor: null }).success).toBe(false);
  });
});
