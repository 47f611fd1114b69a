import type * as grpc from "@grpc/grpc-js";
import { callUnary } from "@router/grpc-kit";
import type { consoleRpc } from "@router/proto";
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

/** Both, over the console's generated gRPC client (built once, in main; in process under `npm start`). */
export function grpcConsolePort(client: consoleRpc.ConsoleServiceClient, opts: { deadlineMs?: number } = {}): CredentialDirectory & LoggingDirectory {
  // A slow console becomes a 503 on the requests whose organisation is not cached, never a hang.
  const deadlineMs = opts.deadlineMs ?? 2_000;
  const c = client as unknown as grpc.Client;
  // Bound once here: callUnary calls each method on the client it is given.
  const credentials = client.organisationCredentials.bind(client);
  const uses = client.recordCredentialUses.bind(client);
  const logging = client.loggingSettings.bind(client);
  return {
    async enabledSealed(orgId) {
      const res = await callUnary(c, credentials, { orgId }, { deadlineMs, service: "console" });
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
      await callUnary(c, uses, { uses: list }, { deadlineMs, service: "console" });
    },
    async excludedKeys(orgId) {
      return (await callUnary(c, logging, { orgId }, { deadlineMs, service: "console" })).keyExclude;
    },
  };
}
