import type * as grpc from "@grpc/grpc-js";
import { callUnary } from "@router/grpc-kit";
import { AUTH_METHODS as SIGN_IN_METHODS, type AuthMethod, type Role, type SessionRecord } from "@router/access";
import type { consoleRpc } from "@router/proto";
import type { KeyRecord } from "@router/api-keys";
import type { SealedSecret } from "@router/sealing";

/** An enabled provider credential as the console keeps it: its key still sealed. */
export interface SealedDispatchCredential {
  id: string;
  providerSlug: string;
  tier: "prioritized" | "fallback";
  priority: number;
  fallbackPolicy: "platform" | "none_for_models" | "none_for_provider";
  modelFilter: Record<string, unknown>;
  sealed: SealedSecret;
}

/** What the gateway asks of the console about provider credentials (the console owns them). */
export interface CredentialDirectory {
  /** The organisation's enabled credentials, in dispatch order. */
  enabledSealed(orgId: string): Promise<SealedDispatchCredential[]>;
  /** When each credential last served (one call per batch). */
  recordUses(uses: ReadonlyMap<string, Date>): Promise<void>;
}

const TIERS = new Set(["prioritized", "fallback"]);
const POLICIES = new Set(["platform", "none_for_models", "none_for_provider"]);

function jsonObject(text: string): Record<string, unknown> {
  const v: unknown = text ? JSON.parse(text) : {};
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** What the gateway reads of an organisation's content-logging settings (the console owns them). */
export interface LoggingDirectory {
  /** The hashes of the keys whose traffic is never kept. */
  excludedKeys(orgId: string): Promise<string[]>;
}

/** What the gateway asks of the console about identity (the console owns keys, sessions, organisations). */
export interface IdentityDirectory {
  /** A key by its peppered hash; null when there is none. */
  findKey(hash: string): Promise<KeyRecord | null>;
  /** A dashboard session by its token hash; null when there is none. */
  findSession(tokenHash: string): Promise<SessionRecord | null>;
  /** A workspace of the organisation; null when it has none with that id. */
  findWorkspace(orgId: string, workspaceId: string): Promise<{ id: string; name: string } | null>;
  /** The organisation's current name; null when there is no such organisation. */
  organisationName(orgId: string): Promise<string | null>;
  /** Pauses the key a runaway flag names, once per flag. */
  applyRunawayFlag(flag: { flagId: string; orgId: string; keyHash: string }): Promise<"paused" | "unchanged" | "duplicate">;
}

const KEY_CLASSES = new Set(["inference", "management"]);
const WINDOWS = new Set(["daily", "weekly", "monthly", "lifetime"]);
const PAUSE_REASONS = new Set(["runaway", "manual"]);
const ROLES = new Set(["owner", "admin", "member", "billing", "readonly"]);
const AUTH_METHODS = new Set<string>(SIGN_IN_METHODS);
const FLAG_RESULTS = new Set(["paused", "unchanged", "duplicate"]);

function oneOf<T extends string>(allowed: ReadonlySet<string>, value: string | undefined): T | null {
  return value !== undefined && allowed.has(value) ? (value as T) : null;
}

function dateOf(ms: bigint | undefined): Date | null {
  return ms === undefined ? null : new Date(Number(ms));
}

/** A key record off the wire; a class it does not know makes the key unusable (null), never a wider one. */
function keyRecordOf(k: consoleRpc.KeyRecord): KeyRecord | null {
  const cls = oneOf<KeyRecord["class"]>(KEY_CLASSES, k.class);
  if (!cls) return null;
  return {
    hash: k.hash,
    prefix: k.prefix,
    orgId: k.orgId,
    operator: k.operator,
    workspaceId: k.workspaceId ?? null,
    workspaceName: k.workspaceName ?? null,
    name: k.name ?? null,
    label: k.label ?? null,
    class: cls,
    limitNanos: k.limitNanodollars ?? null,
    limitReset: oneOf(WINDOWS, k.limitReset),
    limitMode: k.limitMode === "soft" ? "soft" : "hard",
    includeByokInLimit: k.includeByokInLimit,
    paused: k.paused,
    pausedReason: oneOf(PAUSE_REASONS, k.pausedReason),
    disabled: k.disabled,
    expiresAt: dateOf(k.expiresAtMs),
    userId: k.userId ?? null,
    userRole: oneOf<Role>(ROLES, k.userRole),
  };
}

function sessionRecordOf(s: consoleRpc.SessionRecord): SessionRecord | null {
  const authMethod = oneOf<AuthMethod>(AUTH_METHODS, s.authMethod);
  if (!authMethod) return null;
  return {
    tokenHash: s.tokenHash,
    orgId: s.orgId,
    operator: s.operator,
    userId: s.userId ?? null,
    keyHash: s.keyHash ?? null,
    authMethod,
    expiresAt: new Date(Number(s.expiresAtMs)),
    endedAt: dateOf(s.endedAtMs),
    seatRole: oneOf<Role>(ROLES, s.seatRole),
    keyName: s.keyName ?? null,
    keyWorkspaceId: s.keyWorkspaceId ?? null,
    keyDisabled: s.keyDisabled,
    chargeWorkspaceId: s.chargeWorkspaceId ?? null,
    chargeWorkspaceName: s.chargeWorkspaceName ?? null,
  };
}

/** All three, over the console's generated gRPC client (built once, in main; in process under `npm start`). */
export function grpcConsolePort(
  client: consoleRpc.ConsoleServiceClient,
  opts: { deadlineMs?: number } = {},
): CredentialDirectory & LoggingDirectory & IdentityDirectory {
  // A slow console becomes a 503 on the requests whose organisation is not cached, never a hang.
  const deadlineMs = opts.deadlineMs ?? 2_000;
  const c = client as unknown as grpc.Client;
  // Bound once here: callUnary calls each method on the client it is given.
  const credentials = client.organisationCredentials.bind(client);
  const uses = client.recordCredentialUses.bind(client);
  const logging = client.loggingSettings.bind(client);
  const findKey = client.findKey.bind(client);
  const findSession = client.findSession.bind(client);
  const findWorkspace = client.findWorkspace.bind(client);
  const organisationName = client.organisationName.bind(client);
  const applyRunawayFlag = client.applyRunawayFlag.bind(client);
  const call = { deadlineMs, service: "console" };
  return {
    async enabledSealed(orgId) {
      const res = await callUnary(c, credentials, { orgId }, call);
      return res.credentials.map((r) => ({
        id: r.id,
        providerSlug: r.providerSlug,
        tier: TIERS.has(r.tier) ? (r.tier as SealedDispatchCredential["tier"]) : "fallback",
        priority: r.priority,
        fallbackPolicy: POLICIES.has(r.fallbackPolicy) ? (r.fallbackPolicy as SealedDispatchCredential["fallbackPolicy"]) : "platform",
        modelFilter: jsonObject(r.modelFilterJson),
        sealed: {
          ciphertext: Buffer.from(r.key?.ciphertext ?? []),
          iv: Buffer.from(r.key?.iv ?? []),
          tag: Buffer.from(r.key?.tag ?? []),
          wrappedKey: Buffer.from(r.key?.dekCiphertext ?? []),
          wrappedKeyIv: Buffer.from(r.key?.dekIv ?? []),
          wrappedKeyTag: Buffer.from(r.key?.dekTag ?? []),
          kekVersion: r.key?.kekVersion ?? 1,
        },
      }));
    },
    async recordUses(batch) {
      const list = [...batch].map(([credentialId, at]) => ({ credentialId, usedAtMs: BigInt(at.getTime()) }));
      await callUnary(c, uses, { uses: list }, call);
    },
    async excludedKeys(orgId) {
      return (await callUnary(c, logging, { orgId }, call)).keyExclude;
    },
    async findKey(hash) {
      const { key } = await callUnary(c, findKey, { hash }, call);
      return key ? keyRecordOf(key) : null;
    },
    async findSession(tokenHash) {
      const { session } = await callUnary(c, findSession, { tokenHash }, call);
      return session ? sessionRecordOf(session) : null;
    },
    async findWorkspace(orgId, workspaceId) {
      return (await callUnary(c, findWorkspace, { orgId, workspaceId }, call)).workspace ?? null;
    },
    async organisationName(orgId) {
      return (await callUnary(c, organisationName, { orgId }, call)).name ?? null;
    },
    async applyRunawayFlag(flag) {
      const { result } = await callUnary(c, applyRunawayFlag, flag, call);
      if (!FLAG_RESULTS.has(result)) throw new Error(`console answered an unknown runaway flag result: ${result}`);
      return result as "paused" | "unchanged" | "duplicate";
    },
  };
}
