import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseIdentityPublicKeys, parseIdentitySigningKey, resolveSecrets, SECRET_NAMES } from "@router/config";

let dataDir: string;

beforeEach(() => {
  dataDir = join(mkdtempSync(join(tmpdir(), "router-secrets-")), "data");
});

afterEach(() => {
  rmSync(join(dataDir, ".."), { recursive: true, force: true });
});

const secretsFile = () => join(dataDir, "secrets.json");
const stored = () => JSON.parse(readFileSync(secretsFile(), "utf8")) as Record<string, string>;

describe("resolveSecrets", () => {
  it("generates every missing secret into <dataDir>/secrets.json, creating the directory", () => {
    const { secrets, generated } = resolveSecrets({}, dataDir, { allowGenerated: true });
    expect(generated).toEqual([...SECRET_NAMES]);
    expect(stored()).toEqual(secrets);
    for (const name of ["ROUTER_KEY_PEPPER", "ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY"] as const) {
      expect(secrets[name]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
  });

  it("generates the identity pair together: the public set holds the signing key's public half, under its kid", () => {
    const { secrets } = resolveSecrets({}, dataDir, { allowGenerated: true });
    const signing = parseIdentitySigningKey(secrets.ROUTER_IDENTITY_SIGNING_KEY);
    const publicKeys = parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS);
    expect(publicKeys.keys).toEqual([{ kty: "OKP", crv: "Ed25519", x: signing.x, kid: signing.kid }]);
    expect(secrets.ROUTER_IDENTITY_PUBLIC_KEYS).not.toContain(signing.d);
  });

  it("resolves only the names asked for, and a later process gets the other half of the same pair", () => {
    const edge = resolveSecrets({}, dataDir, { allowGenerated: true, names: ["ROUTER_IDENTITY_SIGNING_KEY"] });
    expect(edge.generated).toEqual(["ROUTER_IDENTITY_SIGNING_KEY"]);
    expect(Object.keys(edge.secrets)).toEqual(["ROUTER_IDENTITY_SIGNING_KEY"]);
    const service = resolveSecrets({}, dataDir, { allowGenerated: false, names: ["ROUTER_IDENTITY_PUBLIC_KEYS"] });
    expect(parseIdentityPublicKeys(service.secrets.ROUTER_IDENTITY_PUBLIC_KEYS).keys[0]!.x).toBe(
      parseIdentitySigningKey(edge.secrets.ROUTER_IDENTITY_SIGNING_KEY).x,
    );
  });

  it("generates distinct secrets", () => {
    const { secrets } = resolveSecrets({}, dataDir, { allowGenerated: true });
    expect(new Set(Object.values(secrets)).size).toBe(SECRET_NAMES.length);
  });

  it("writes the file readable by its owner only", () => {
    resolveSecrets({}, dataDir, { allowGenerated: true });
    expect(statSync(secretsFile()).mode & 0o777).toBe(0o600);
  });

  it("reuses the stored secrets on the next start instead of generating new ones", () => {
    const first = resolveSecrets({}, dataDir, { allowGenerated: true });
    const second = resolveSecrets({}, dataDir, { allowGenerated: true });
    expect(second.secrets).toEqual(first.secrets);
    expect(second.generated).toEqual([]);
  });

  it("reuses stored secrets even where generating is not allowed", () => {
    const first = resolveSecrets({}, dataDir, { allowGenerated: true });
    expect(resolveSecrets({}, dataDir, { allowGenerated: false }).secrets).toEqual(first.secrets);
  });

  it("prefers a secret from the environment over the stored one", () => {
    resolveSecrets({}, dataDir, { allowGenerated: true });
    const { secrets } = resolveSecrets({ ROUTER_MASTER_KEY: "from-env" }, dataDir, { allowGenerated: true });
    expect(secrets.ROUTER_MASTER_KEY).toBe("from-env");
  });

  it("generates only what the environment lacks and never writes environment secrets to disk", () => {
    const env = { ROUTER_KEY_PEPPER: "pepper-from-env", ROUTER_INTERNAL_SECRET: "internal-from-env" };
    const { secrets, generated } = resolveSecrets(env, dataDir, { allowGenerated: true });
    expect(generated).toEqual(["ROUTER_MASTER_KEY", "ROUTER_IDENTITY_SIGNING_KEY", "ROUTER_IDENTITY_PUBLIC_KEYS"]);
    expect(secrets.ROUTER_KEY_PEPPER).toBe("pepper-from-env");
    expect(secrets.ROUTER_INTERNAL_SECRET).toBe("internal-from-env");
    expect(Object.keys(stored()).sort()).toEqual(["ROUTER_IDENTITY_PUBLIC_KEYS", "ROUTER_IDENTITY_SIGNING_KEY", "ROUTER_MASTER_KEY"]);
    expect(readFileSync(secretsFile(), "utf8")).not.toContain("from-env");
  });

  it("writes no file when the environment sets every secret", () => {
    const env = { ROUTER_KEY_PEPPER: "a", ROUTER_INTERNAL_SECRET: "b", ROUTER_MASTER_KEY: "c", ROUTER_IDENTITY_SIGNING_KEY: "d", ROUTER_IDENTITY_PUBLIC_KEYS: "e" };
    const { secrets, generated } = resolveSecrets(env, dataDir, { allowGenerated: false });
    expect(secrets).toEqual(env);
    expect(generated).toEqual([]);
    expect(existsSync(secretsFile())).toBe(false);
  });

  it("treats an empty environment value as unset", () => {
    const { secrets, generated } = resolveSecrets({ ROUTER_MASTER_KEY: "" }, dataDir, { allowGenerated: true });
    expect(generated).toContain("ROUTER_MASTER_KEY");
    expect(secrets.ROUTER_MASTER_KEY).not.toBe("");
  });

  it("throws naming the missing secret when generating is not allowed", () => {
    const env = { ROUTER_KEY_PEPPER: "a", ROUTER_MASTER_KEY: "c" };
    expect(() => resolveSecrets(env, dataDir, { allowGenerated: false })).toThrow(/ROUTER_INTERNAL_SECRET/);
    expect(existsSync(secretsFile())).toBe(false);
  });

  it("keeps a secret stored earlier when it generates another later", () => {
    const first = resolveSecrets({ ROUTER_MASTER_KEY: "m", ROUTER_INTERNAL_SECRET: "i" }, dataDir, {
      allowGenerated: true,
    });
    const second = resolveSecrets({ ROUTER_INTERNAL_SECRET: "i" }, dataDir, { allowGenerated: true });
    expect(second.generated).toEqual(["ROUTER_MASTER_KEY"]);
    expect(second.secrets.ROUTER_KEY_PEPPER).toBe(first.secrets.ROUTER_KEY_PEPPER);
    expect(stored().ROUTER_KEY_PEPPER).toBe(first.secrets.ROUTER_KEY_PEPPER);
    expect(statSync(secretsFile()).mode & 0o777).toBe(0o600);
  });
});
