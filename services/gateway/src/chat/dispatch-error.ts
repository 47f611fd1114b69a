import { DomainError } from "@router/errors";
import type { CascadeResult } from "../dispatch/types";

/** The code of an error answered because the provider was overloaded; each format picks its status (`overloadedStatus`). */
export const UPSTREAM_OVERLOADED = "router.upstream_overloaded";
const ANTHROPIC_OVERLOADED = 529;

/** The client's error when no endpoint served: the last provider's status, mapped. */
export function dispatchError(r: CascadeResult, cascadeModels: string[]): DomainError {
  const f = r.failure;
  if (!f) {
    // Nothing was dispatched: open circuits are tried anyway when nothing else is left, so every
    // endpoint was passed over for want of a credential (or an adapter) that may serve it.
    const providers = [...new Set(r.skipped.map((s) => s.candidate.providerSlug))];
    const models = [...new Set(cascadeModels)];
    if (r.skipped.length > 0 && r.skipped.every((s) => s.reason === "no_deployment")) {
      return new DomainError(
        "no_route",
        `no deployment of ${models.join(", ") || "this model"} in the organisation's Azure OpenAI resources: add one to a credential's deployments (catalog model id = deployment name)`,
        { status: 404, details: { unsatisfied_filters: ["byok_credential"], providers } },
      );
    }
    return new DomainError(
      "no_route",
      `no enabled provider credential can serve ${models.join(", ") || "this request"}: add a provider key for ${providers.join(" or ") || "its provider"}`,
      { status: 404, details: { unsatisfied_filters: ["byok_credential"], providers } },
    );
  }
  const details = {
    provider: f.providerSlug,
    provider_status: f.httpStatus,
    provider_code: f.providerCode,
    attempts: r.attempts.length,
  };
  if (f.kind === "unsupported") return new DomainError("invalid_request", f.clientMessage, { status: 400, details });
  // Router's own failure, not the provider's: no provider answered anything.
  if (f.kind === "not_sent") return new DomainError("internal", f.recordMessage, { status: 500, details });
  // Retrying soon may work, and clients back off from an overload their own way (Claude Code on Anthropic's 529).
  if (f.kind === "http" && f.httpStatus === ANTHROPIC_OVERLOADED) return new DomainError(UPSTREAM_OVERLOADED, f.clientMessage, { status: 503, details });
  if (f.kind === "http") return new DomainError("upstream_error", f.clientMessage, { status: clientStatus(f.httpStatus), details });
  return new DomainError("upstream_error", f.clientMessage, { status: 502, details });
}

/**
 * A provider's 429 stays 429 (the caller should slow down) and a 4xx about the request itself keeps
 * its status. A rejected provider credential (401, 403), a model the provider does not know (404), a
 * provider timeout (408), 5xx and anything else are the gateway's upstream failing: 502, so an SDK
 * never reads the organisation's provider key trouble as its own router key being refused.
 */
function clientStatus(providerStatus: number | null): number {
  const s = providerStatus ?? 502;
  if (s === 429) return 429;
  if (s >= 400 && s < 500 && !UPSTREAM_SIDE_4XX.has(s)) return s;
  return 502;
}

const UPSTREAM_SIDE_4XX = new Set([401, 403, 404, 407, 408]);
