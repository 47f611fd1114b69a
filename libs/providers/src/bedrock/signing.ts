import { createHash } from "node:crypto";
import { AssumeRoleCommand, STSClient } from "@aws-sdk/client-sts";
import { systemClock, type Clock } from "@router/money";
import { Hash } from "@smithy/hash-node";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import type { BedrockCredential } from "../cloud-credentials";
import { UpstreamAuthError, type UpstreamHttpRequest, type UpstreamTarget } from "../types";
import { bedrockRegion } from "./url";

/** The keys a request is signed with: the credential's own, or a role's temporary ones. */
export interface AwsKeys {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface AssumedRole extends AwsKeys {
  expiration: Date;
}

export interface AssumeRoleInput {
  roleArn: string;
  externalId?: string;
  /** The credential's region: STS is called in it (regional endpoints answer faster than the global one). */
  region: string;
  keys: AwsKeys;
}

/** Whatever asks STS for a role's keys; tests inject their own (there is no fake STS). */
export interface RoleAssumer {
  assumeRole(input: AssumeRoleInput): Promise<AssumedRole>;
}

const STS_TIMEOUT_MS = 10_000;

/** STS through the AWS SDK: `AssumeRole` with the credential's keys, for an hour. */
export const stsRoleAssumer: RoleAssumer = {
  async assumeRole(input) {
    const client = new STSClient({ region: input.region, credentials: input.keys, maxAttempts: 2 });
    try {
      const out = await client.send(
        new AssumeRoleCommand({
          RoleArn: input.roleArn,
          RoleSessionName: "router-gateway",
          DurationSeconds: 3600,
          ...(input.externalId ? { ExternalId: input.externalId } : {}),
        }),
        { abortSignal: AbortSignal.timeout(STS_TIMEOUT_MS) },
      );
      const c = out.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey || !c.Expiration) throw new Error("AssumeRole answered without credentials");
      return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
    } finally {
      client.destroy();
    }
  },
};

export interface BedrockSignerOptions {
  roles?: RoleAssumer;
  clock?: Clock;
  /** A role's keys are asked for again this long before they expire (default five minutes). */
  refreshBeforeMs?: number;
  /** Roles kept at most (oldest dropped first). */
  maxRoles?: number;
}

// SigV4 over SHA-256 with Node's crypto, as the AWS SDK does in Node.
const Sha256 = Hash.bind(null, "sha256");

/**
 * Signs Bedrock requests with SigV4 (service `bedrock`, the endpoint's region) over exactly the
 * bytes sent: the method, the path as sent, the host of the URL, every header of the request (the
 * content type and accept among them) and the body text. A credential with `role_arn` signs with
 * the role's temporary keys, asked of STS once and kept until shortly before they expire.
 */
export class BedrockSigner {
  private readonly roles: RoleAssumer;
  private readonly clock: Clock;
  private readonly refreshBeforeMs: number;
  private readonly maxRoles: number;
  // Credential fingerprint → the role's keys (or the call asking for them, shared by concurrent requests).
  private readonly assumed = new Map<string, Promise<AssumedRole>>();

  constructor(opts: BedrockSignerOptions = {}) {
    this.roles = opts.roles ?? stsRoleAssumer;
    this.clock = opts.clock ?? systemClock;
    this.refreshBeforeMs = opts.refreshBeforeMs ?? 5 * 60_000;
    this.maxRoles = opts.maxRoles ?? 1000;
  }

  async sign(req: UpstreamHttpRequest, target: UpstreamTarget): Promise<UpstreamHttpRequest> {
    const cloud = target.cloud;
    if (cloud?.provider !== "bedrock") throw new UpstreamAuthError("not_a_bedrock_credential");
    const keys = await this.keysFor(cloud);
    const signer = new SignatureV4({ service: "bedrock", region: bedrockRegion(target), credentials: keys, sha256: Sha256 });
    const url = req.url;
    const unsigned = new HttpRequest({
      method: "POST",
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { ...req.headers, host: url.host },
      body: req.body,
    });
    const signed = await signer.sign(unsigned, { signingDate: this.clock.now() });
    return { url, headers: signed.headers, body: req.body };
  }

  /** The keys to sign with for a credential: its own, or its role's. */
  async keysFor(cred: BedrockCredential): Promise<AwsKeys> {
    const own: AwsKeys = {
      accessKeyId: cred.access_key_id,
      secretAccessKey: cred.secret_access_key,
      ...(cred.session_token ? { sessionToken: cred.session_token } : {}),
    };
    if (!cred.role_arn) return own;
    const key = fingerprint(cred);
    const now = this.clock.now().getTime();
    const cached = this.assumed.get(key);
    if (cached) {
      const role = await cached.catch(() => null);
      if (role && role.expiration.getTime() - now > this.refreshBeforeMs) return role;
      if (this.assumed.get(key) === cached) this.assumed.delete(key);
    }
    let pending = this.assumed.get(key);
    if (!pending) {
      pending = this.roles.assumeRole({ roleArn: cred.role_arn, region: cred.region, keys: own, ...(cred.external_id ? { externalId: cred.external_id } : {}) });
      this.remember(key, pending);
    }
    try {
      return await pending;
    } catch (err) {
      if (this.assumed.get(key) === pending) this.assumed.delete(key);
      // STS's own words may name the role or the account; the reason stays a code.
      throw new UpstreamAuthError("assume_role_failed", { cause: err });
    }
  }

  private remember(key: string, pending: Promise<AssumedRole>): void {
    this.assumed.delete(key);
    this.assumed.set(key, pending);
    while (this.assumed.size > this.maxRoles) {
      const oldest = this.assumed.keys().next().value;
      if (oldest === undefined) break;
      this.assumed.delete(oldest);
    }
  }
}

/** Names a credential's role session without keeping its secret in memory as a map key. */
function fingerprint(cred: BedrockCredential): string {
  return createHash("sha256")
    .update(JSON.stringify([cred.access_key_id, cred.secret_access_key, cred.session_token ?? "", cred.role_arn ?? "", cred.external_id ?? "", cred.region]))
    .digest("base64url");
}
