import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, serviceSecrets } from "../src";

describe("the secrets one service needs", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "router-secrets-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("takes them from the environment, with or without a database", () => {
    const env = { ROUTER_INTERNAL_SECRET: "i", ROUTER_MASTER_KEY: "m" };
    expect(serviceSecrets(env, ["ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY"], { dataDir: dir, embedded: false })).toEqual({
      ROUTER_INTERNAL_SECRET: "i",
      ROUTER_MASTER_KEY: "m",
    });
  });

  it("refuses to start with a database when one is missing, naming it", () => {
    expect(() => serviceSecrets({ ROUTER_MASTER_KEY: "m" }, ["ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY"], { dataDir: dir, embedded: false })).toThrow(
      ConfigError,
    );
    expect(() => serviceSecrets({}, ["ROUTER_INTERNAL_SECRET"], { dataDir: dir, embedded: false })).toThrow(/ROUTER_INTERNAL_SECRET: required with DATABASE_URL/);
  });

  it("embedded, shares the ones generated once under the data directory", () => {
    const first = serviceSecrets({}, ["ROUTER_INTERNAL_SECRET"], { dataDir: dir, embedded: true });
    const again = serviceSecrets({}, ["ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY"], { dataDir: dir, embedded: true });
    expect(first.ROUTER_INTERNAL_SECRET).toHaveLength(43);
    expect(again.ROUTER_INTERNAL_SECRET).toBe(first.ROUTER_INTERNAL_SECRET);
  });
});
