import { IDENTITY_HEADER, signIdentity, type IdentitySigningKey } from "@router/http-kit";
import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { z } from "zod";

/** What an organisation's account privacy policy says about keeping content, as far as the gateway knows. */
export type AccountZdr = "required" | "not_required" | "unknown";

const privacyAnswer = z.object({ data: z.object({ policy: z.object({ zdr: z.boolean() }) }) });

const READ_TIMEOUT_MS = 1000;

/**
 * Whether an organisation's account privacy policy demands zero data retention (`zdr`). Routing
 * owns the policy and the Plan answer does not carry it, so the gateway reads routing's own
 * `GET /v1/privacy` (with a signed identity, as forwarded management calls carry) through a
 * 10-second cache: one read per organisation per 10 s, only for requests that would keep an
 * answer. A read that fails keeps the last answer while it is cached; with none, `unknown`.
 */
export class AccountPrivacy {
  private readonly cache: LoadingCache<AccountZdr>;

  constructor(
    private readonly deps: { routingUrl: string; identityKey: IdentitySigningKey; clock: Clock; log: Logger; cacheTtlMs?: number },
  ) {
    this.cache = new LoadingCache((orgId, previous) => this.read(orgId, previous), deps.clock, { ttlMs: deps.cacheTtlMs ?? 10_000 });
  }

  zdr(orgId: string): Promise<AccountZdr> {
    return this.cache.get(orgId);
  }

  /** After a privacy write through this gateway: the next request reads the policy again. */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  private async read(orgId: string, previous: AccountZdr | undefined): Promise<AccountZdr> {
    try {
      // The gateway reads on the organisation's behalf, as a read-only management caller: routing's
      // management routes refuse inference credentials whatever the role.
      const identity = await signIdentity(
        { orgId, credential: "management", keyHash: null, keyName: null, workspaceId: null, role: "readonly", userId: null, operator: false },
        this.deps.identityKey,
        this.deps.clock.now().getTime(),
      );
      const answer = await fetch(`${this.deps.routingUrl}/v1/privacy`, {
        headers: { [IDENTITY_HEADER]: identity },
        signal: AbortSignal.timeout(READ_TIMEOUT_MS),
      });
      if (!answer.ok) throw new Error(`routing answered ${answer.status}`);
      return privacyAnswer.parse(await answer.json()).data.policy.zdr ? "required" : "not_required";
    } catch (err) {
      this.deps.log.warn({ err, orgId }, "gateway.stored_responses.privacy_unreadable");
      return previous ?? "unknown";
    }
  }
}
