import { DomainError } from "@router/errors";
import type { CompletionResult, StreamResult } from "../dispatch/cascade";

/** The client's error when no endpoint served: the last provider's status, mapped. */
export function dispatchError(r: CompletionResult | StreamResult, cascadeModels: string[]): DomainError {
  const f = r.failure;
  if (!f) {
    const providers = [...new Set(r.skipped.map((s) => s.candidate.providerSlug))];
    if (r.skipped.length && r.skipped.every((s) => s.reason === "circuit_open")) {
      return new DomainError("router.endpoints_unavailable", "every endpoint that could serve this request is failing right now; try again shortly", {
        status: 503,
        details: { providers },
      });
    }
    const models = [...new Set(cascadeModels)];
    return new DomainError(
      "no_route",
      `no enabled provider credential can serve ${models.join(", ") || "this request"}: add a provider key for ${providers.join(" or ") || "its provider"}`,
      { status: 404, details: { unsatisfied_filters: ["byok_credential"], providers } },
    );
  }
  const details = {
    provider: f.providerSlug,
    provider_status: f.httpStatus,
    provider_code: f.opts.providerCode ?? null,
    attempts: r.attempts.length,
  };
  if (f.kind === "unsupported") return new DomainError("invalid_request", f.clientMessage, { status: 400, details });
  if (f.kind === "http") {
    const s = f.httpStatus ?? 502;
    const status = s === 429 ? 429 : s >= 500 ? 502 : s >= 400 ? s : 502;
    return new DomainError("upstream_error", f.clientMessage, { status, details });
  }
  return new DomainError("upstream_error", f.clientMessage, { status: 502, details });
}
