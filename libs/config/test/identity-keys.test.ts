import { ConfigError, generateIdentityKeyPair, identityKeyThumbprint, parseIdentityPublicKeys, parseIdentitySigningKey } from "@router/config";

const pair = generateIdentityKeyPair();
const signingJson = JSON.stringify(pair.signingKey);
const publicJson = JSON.stringify(pair.publicKeys);

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("the edge's identity keys from the environment", () => {
  it("reads the private JWK and the public JWKS a generated pair prints", () => {
    expect(parseIdentitySigningKey(signingJson)).toEqual(pair.signingKey);
    expect(parseIdentityPublicKeys(publicJson)).toEqual(pair.publicKeys);
    expect(pair.signingKey.kid).toBe(identityKeyThumbprint(pair.signingKey.x));
  });

  it("gives a key without kid its RFC 7638 thumbprint", () => {
    const { kid: _kid, ...unnamed } = pair.signingKey;
    expect(parseIdentitySigningKey(JSON.stringify(unnamed)).kid).toBe(pair.signingKey.kid);
    const publicOnly = { keys: [{ kty: "OKP", crv: "Ed25519", x: pair.signingKey.x, use: "sig" }] };
    expect(parseIdentityPublicKeys(JSON.stringify(publicOnly)).keys[0]!.kid).toBe(pair.signingKey.kid);
  });

  it("refuses a public set holding a private part, in one line naming the variable", () => {
    const leaked = JSON.stringify({ keys: [pair.signingKey] });
    const err = configError(() => parseIdentityPublicKeys(leaked));
    expect(err.issues).toEqual(['ROUTER_IDENTITY_PUBLIC_KEYS: holds a private key (a "d" member); give the public keys only']);
    expect(err.message).not.toContain(pair.signingKey.d);
  });

  it("refuses what is not a set of Ed25519 public keys, naming the variable and the field", () => {
    expect(configError(() => parseIdentityPublicKeys("not json")).issues).toEqual(["ROUTER_IDENTITY_PUBLIC_KEYS: not JSON"]);
    expect(configError(() => parseIdentityPublicKeys('{"keys":[]}')).issues[0]).toMatch(/^ROUTER_IDENTITY_PUBLIC_KEYS\.keys: /);
    const rsa = JSON.stringify({ keys: [{ kty: "RSA", n: "x", e: "AQAB" }] });
    expect(configError(() => parseIdentityPublicKeys(rsa)).issues[0]).toMatch(/^ROUTER_IDENTITY_PUBLIC_KEYS\.keys\.0\.kty: /);
    const twice = JSON.stringify({ keys: [...pair.publicKeys.keys, { ...generateIdentityKeyPair().publicKeys.keys[0], kid: pair.signingKey.kid }] });
    expect(configError(() => parseIdentityPublicKeys(twice)).issues[0]).toMatch(/names two keys/);
  });

  it("refuses a signing key without its private part, naming the variable", () => {
    const err = configError(() => parseIdentitySigningKey(JSON.stringify(pair.publicKeys.keys[0])));
    expect(err.issues).toEqual([expect.stringMatching(/^ROUTER_IDENTITY_SIGNING_KEY\.d: /)]);
  });
});
