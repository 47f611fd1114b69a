import { ConfigError, env, loadConfig, z } from "@router/config";

const schema = z.object({
  PORT: env.port(8080),
  HOST: z.string().default("127.0.0.1"),
  DEBUG: env.bool(false),
  WORKERS: env.int(2),
  DATABASE_URL: env.url().optional(),
  BROKERS: env.list().default([]),
});

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("fills every default from an empty environment", () => {
    expect(loadConfig(schema, {})).toEqual({
      PORT: 8080,
      HOST: "127.0.0.1",
      DEBUG: false,
      WORKERS: 2,
      DATABASE_URL: undefined,
      BROKERS: [],
    });
  });

  it("parses set values into their types", () => {
    const config = loadConfig(schema, {
      PORT: "9000",
      HOST: "0.0.0.0",
      DEBUG: "true",
      WORKERS: "8",
      DATABASE_URL: "postgres://localhost:5432/router",
      BROKERS: "a:9092,b:9092",
    });
    expect(config).toEqual({
      PORT: 9000,
      HOST: "0.0.0.0",
      DEBUG: true,
      WORKERS: 8,
      DATABASE_URL: "postgres://localhost:5432/router",
      BROKERS: ["a:9092", "b:9092"],
    });
  });

  it("treats empty strings as unset so defaults apply", () => {
    const config = loadConfig(schema, { PORT: "", HOST: "", DEBUG: "", WORKERS: "", DATABASE_URL: "", BROKERS: "" });
    expect(config).toEqual(loadConfig(schema, {}));
  });

  it("reports a required key that is only set to an empty string as missing", () => {
    const required = z.object({ ROUTER_MASTER_KEY: z.string() });
    const err = configError(() => loadConfig(required, { ROUTER_MASTER_KEY: "" }));
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatch(/^ROUTER_MASTER_KEY: /);
  });

  it("ignores variables the schema does not name", () => {
    expect(loadConfig(schema, { PATH: "/usr/bin", HOME: "/root" })).not.toHaveProperty("PATH");
  });

  it("throws a ConfigError naming every bad key, not just the first", () => {
    const err = configError(() =>
      loadConfig(schema, { PORT: "70000", DEBUG: "maybe", WORKERS: "many", DATABASE_URL: "not a url" }),
    );
    expect(err.name).toBe("ConfigError");
    const keys = err.issues.map((i) => i.split(":")[0]).sort();
    expect(keys).toEqual(["DATABASE_URL", "DEBUG", "PORT", "WORKERS"]);
    for (const key of keys) expect(err.message).toContain(key);
  });

  it("does not name keys that are fine", () => {
    const err = configError(() => loadConfig(schema, { PORT: "-1", HOST: "example.org" }));
    expect(err.message).toContain("PORT");
    expect(err.message).not.toContain("HOST");
  });

  it("reads process.env when no environment is passed", () => {
    const name = "ROUTER_CONFIG_TEST_VALUE";
    process.env[name] = "from-process";
    try {
      expect(loadConfig(z.object({ [name]: z.string() }))).toEqual({ [name]: "from-process" });
    } finally {
      delete process.env[name];
    }
  });
});

describe("env.port", () => {
  const ports = z.object({ PORT: env.port(3000) });

  it("accepts 0 so tests can ask for any free port", () => {
    expect(loadConfig(ports, { PORT: "0" }).PORT).toBe(0);
  });

  it.each([["65536"], ["-1"], ["80.5"], ["http"]])("rejects %j", (value) => {
    expect(() => loadConfig(ports, { PORT: value })).toThrow(ConfigError);
  });
});

describe("env.bool", () => {
  const flags = z.object({ ON: env.bool(true), OFF: env.bool(false) });

  it.each([["true"], ["1"], ["yes"]])("reads %j as true", (value) => {
    expect(loadConfig(flags, { OFF: value }).OFF).toBe(true);
  });

  it.each([["false"], ["0"], ["no"]])("reads %j as false", (value) => {
    expect(loadConfig(flags, { ON: value }).ON).toBe(false);
  });

  it("falls back to its default in either direction", () => {
    expect(loadConfig(flags, {})).toEqual({ ON: true, OFF: false });
  });

  it.each([["maybe"], ["on"], ["2"]])("rejects %j rather than guessing", (value) => {
    const err = configError(() => loadConfig(flags, { ON: value }));
    expect(err.issues[0]).toMatch(/^ON: /);
  });
});

describe("env.list", () => {
  const lists = z.object({ ITEMS: env.list() });

  it("splits on commas and trims each item", () => {
    expect(loadConfig(lists, { ITEMS: " a , b,c " }).ITEMS).toEqual(["a", "b", "c"]);
  });

  it("drops empty items", () => {
    expect(loadConfig(lists, { ITEMS: "a,,b," }).ITEMS).toEqual(["a", "b"]);
  });

  it("gives one item for a value without commas", () => {
    expect(loadConfig(lists, { ITEMS: "only" }).ITEMS).toEqual(["only"]);
  });

  it("is required unless given a default", () => {
    expect(() => loadConfig(lists, {})).toThrow(ConfigError);
  });
});
