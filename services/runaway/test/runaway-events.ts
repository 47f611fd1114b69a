import { randomBytes } from "node:crypto";
import type { EventBus } from "@router/bus";
import type { Role } from "@router/access";
import { signIdentity, type Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { fromUsd } from "@router/money";
import { events, TOPICS } from "@router/proto";

export const TEST_IDENTITY = newIdentityKeys();

export function generationId(): string {
  return `gen-${randomBytes(9).toString("base64url")}`;
}

/** A key hash as the gateway makes them: 64 hex characters. */
export function keyHash(): string {
  return randomBytes(32).toString("hex");
}

/** A served request of `usd` at list price, made at `at` by `keyHash`; tests override the rest. */
export function completion(
  at: Date,
  opts: { orgId: string; keyHash: string; usd?: number; agent?: string; keyName?: string; requestId?: string },
): events.RequestCompleted {
  return events.RequestCompleted.fromPartial({
    requestId: opts.requestId ?? generationId(),
    orgId: opts.orgId,
    keyHash: opts.keyHash,
    keyName: opts.keyName ?? "batch job",
    keyClass: "inference",
    createdAtMs: BigInt(at.getTime()),
    requestedModel: "openai/gpt-4o-mini",
    servedModel: "openai/gpt-4o-mini",
    providerSlug: "openai",
    status: "complete",
    billedCostNanodollars: 0n,
    listCostNanodollars: fromUsd(opts.usd ?? 0.001),
    agent: opts.agent ?? "",
  });
}

/** Publishes completions on the real bus, as the gateway does (keyed by organisation, id = generation id). */
export async function publishCompletions(bus: EventBus, completions: readonly events.RequestCompleted[], eventId?: string): Promise<void> {
  for (const c of completions) {
    await bus.publish({
      topic: TOPICS.requestCompleted,
      key: c.orgId,
      type: TOPICS.requestCompleted,
      id: eventId ?? c.requestId,
      payload: events.RequestCompleted.encode(c).finish(),
    });
  }
}

export async function identityHeader(
  orgId: string,
  opts: { role?: Role; credential?: Identity["credential"] } = {},
): Promise<Record<string, string>> {
  const identity: Identity = {
    orgId,
    credential: opts.credential ?? "management",
    keyHash: "b".repeat(64),
    keyName: "test",
    workspaceId: null,
    role: opts.role ?? "owner",
    userId: null,
    operator: false,
  };
  return { "x-router-identity": await signIdentity(identity, TEST_IDENTITY.signingKey) };
}
