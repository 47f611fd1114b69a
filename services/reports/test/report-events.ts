import { randomBytes } from "node:crypto";
import type { Role } from "@router/access";
import { signIdentity, type Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { events } from "@router/proto";

export const TEST_IDENTITY = newIdentityKeys();

export function generationId(): string {
  return `gen-${randomBytes(9).toString("base64url")}`;
}

/** A served BYOK request of workspace ws_client1; tests override what they are about. */
export function completedEvent(overrides: Partial<events.RequestCompleted> = {}): events.RequestCompleted {
  return events.RequestCompleted.fromPartial({
    requestId: generationId(),
    orgId: "org_alpha",
    keyHash: "a".repeat(64),
    keyName: "client key",
    keyClass: "inference",
    workspaceId: "ws_client1",
    workspaceName: "Client One",
    createdAtMs: BigInt(Date.parse("2026-11-21T09:00:00.000Z")),
    requestedModel: "openai/gpt-4o-mini",
    servedModel: "openai/gpt-4o-mini",
    providerSlug: "openai",
    status: "complete",
    isByok: true,
    billedCostNanodollars: 0n,
    listCostNanodollars: 4_500n,
    agent: "planner",
    usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 2, reasoningTokens: 1 },
    ...overrides,
  });
}

export const encodeEvent = (e: events.RequestCompleted): Uint8Array => events.RequestCompleted.encode(e).finish();

export interface IdentityOptions {
  orgId?: string;
  role?: Role;
  credential?: Identity["credential"];
  workspace?: Identity["workspace"];
  orgName?: string;
}

/** The signed identity header the gateway would forward. */
export async function identityHeader(opts: IdentityOptions = {}): Promise<Record<string, string>> {
  const identity: Identity = {
    orgId: opts.orgId ?? "org_alpha",
    credential: opts.credential ?? "management",
    keyHash: "b".repeat(64),
    keyName: "mgmt",
    workspaceId: null,
    role: opts.role ?? "owner",
    userId: null,
    operator: false,
    ...(opts.workspace ? { workspace: opts.workspace } : {}),
    orgName: opts.orgName ?? "Alpha Agency",
  };
  return { "x-router-identity": await signIdentity(identity, TEST_IDENTITY.signingKey) };
}
