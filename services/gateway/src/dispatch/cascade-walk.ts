import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import type { ProviderAdapter } from "@router/providers";
import type { AttemptFailure } from "./attempt-failure";
import type { Candidate, Skip } from "./types";

/** One dispatch the cascade may make: an endpoint with one credential that may serve it. */
export interface PlannedAttempt {
  /** 1-indexed position in the cascade as walked: one per endpoint and credential. */
  index: number;
  candidate: Candidate;
  credential: DispatchCredential;
  adapter: ProviderAdapter;
  /** Dispatched although its endpoint's circuit is open: nothing else was left to try. */
  circuitOpen?: boolean;
}

/**
 * Iterates the dispatch plan, leaving out what a failure rules out: the same endpoint with other
 * credentials when the endpoint itself failed (5xx, timeout, broken connection), and whatever the
 * failed credential's `fallback_policy` forbids: `none_for_provider` keeps the request away from that
 * provider's other endpoints, `none_for_models` keeps it from falling back to other models.
 * `platform` (the default) forbids nothing; there is no platform capacity in this release.
 * Endpoints whose circuit is open are skipped and listed as such, until the plan is exhausted with
 * nothing served: then they are tried in order after all (a load balancer's panic mode), because an
 * open circuit only says the endpoint failed recently, and a request with nothing left to try would
 * fail without asking anyone. An endpoint routing hoisted as a `pinned` sticky pin is tried in its
 * place even while its circuit is open: the request asked to stay on it regardless.
 */
export class CascadeWalk implements Iterable<PlannedAttempt> {
  private readonly rules: Array<(p: PlannedAttempt) => "same_endpoint" | "fallback_policy" | null> = [];

  constructor(
    private readonly plan: PlannedAttempt[],
    private readonly skipped: Skip[],
    /** Whether an endpoint's circuit is open: it is skipped without a dispatch. */
    private readonly circuitOpen: (endpointId: string) => boolean,
  ) {}

  failed(p: PlannedAttempt, failure: AttemptFailure): void {
    const endpoint = p.candidate.endpointId;
    if (!failure.credentialSpecific) this.rules.push((n) => (n.candidate.endpointId === endpoint ? "same_endpoint" : null));
    const policy = p.credential.fallbackPolicy;
    if (policy === "none_for_provider") {
      const provider = p.candidate.providerSlug;
      this.rules.push((n) => (n.candidate.providerSlug === provider ? "fallback_policy" : null));
    } else if (policy === "none_for_models") {
      const model = p.candidate.modelId;
      this.rules.push((n) => (n.candidate.modelId !== model ? "fallback_policy" : null));
    }
  }

  private ruling(p: PlannedAttempt): "same_endpoint" | "fallback_policy" | null {
    return this.rules.map((r) => r(p)).find((x) => x !== null) ?? null;
  }

  *[Symbol.iterator](): Iterator<PlannedAttempt> {
    let lastSkipped: string | null = null;
    const open: Array<{ p: PlannedAttempt; skip: Skip }> = [];
    for (const p of this.plan) {
      const ruling = this.ruling(p);
      if (ruling === null) {
        if (p.candidate.pinned && this.circuitOpen(p.candidate.endpointId)) yield { ...p, circuitOpen: true };
        else if (this.circuitOpen(p.candidate.endpointId)) {
          const skip: Skip = { candidate: p.candidate, reason: "circuit_open" };
          this.skipped.push(skip);
          open.push({ p, skip });
        } else yield p;
        continue;
      }
      // An endpoint left out for its policy is reported once, however many credentials it had.
      if (ruling === "fallback_policy" && lastSkipped !== p.candidate.endpointId) {
        this.skipped.push({ candidate: p.candidate, reason: "fallback_policy" });
        lastSkipped = p.candidate.endpointId;
      }
    }
    // Reached only when everything tried so far failed over: the open circuits are all that is left.
    for (const { p, skip } of open) {
      if (this.ruling(p) !== null) continue;
      const at = this.skipped.indexOf(skip);
      if (at >= 0) this.skipped.splice(at, 1);
      yield { ...p, circuitOpen: true };
    }
  }
}
