import type { Request, RequestHandler, Response } from "express";
import { Counter, Gauge, type Registry } from "prom-client";
import { createMetricsRegistry, TalliedCounter, TalliedHistogram } from "@router/http-kit";
import type { LoadingCacheStats } from "@router/loading-cache";

// Routing overhead is meant to stay in single-digit milliseconds, so the buckets are fine there.
const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const UPSTREAM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];
const TTFT_BUCKETS = [0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30];

/** What the metrics read of a finished chat request (chat/request-outcome.ts's outcome carries it). */
export interface FinishedChat {
  status: string;
  routingOverheadMs: number | null;
  streamed: boolean;
  ttftMs: number | null;
  attempts: ReadonlyArray<{ candidate: { providerSlug: string }; httpStatus: number | null; circuitOpen: boolean; durationMs: number | null; errorCode: string | null }>;
}

/**
 * Every series the gateway exports, on a registry of its own per instance. Labels are bounded:
 * route patterns (not paths), HTTP methods and statuses, provider slugs and catalog endpoint ids;
 * never a key, an organisation or a requested model.
 */
export class GatewayMetrics {
  readonly registry: Registry;
  // Tallied: counted on every request, handed to prom-client when scraped.
  private readonly httpRequests: TalliedCounter<"route" | "method" | "status">;
  private readonly chatRequests: TalliedCounter<"outcome">;
  private readonly overhead: TalliedHistogram;
  private readonly upstreamLatency: TalliedHistogram<"provider" | "outcome">;
  private readonly upstreamAttempts: TalliedCounter<"provider" | "status">;
  private readonly circuitOpenDispatches: Counter<"provider">;
  private readonly timeToFirstToken: TalliedHistogram;
  private readonly circuitOpen: Gauge<"endpoint">;
  private readonly leaseAdmissions: Counter;
  private readonly leaseCalls: Counter<"outcome">;
  private readonly rateLimitRefusals: Counter<"limit">;
  private readonly runawayFlags: Counter<"result">;
  private readonly contentFilterMatches: Counter<"action">;
  private authCacheStats: (() => LoadingCacheStats) | undefined;
  private closingsPending: (() => number) | undefined;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registry = createMetricsRegistry("gateway", opts);
    this.registry = registry;
    const registers = [registry];
    this.httpRequests = new TalliedCounter({
      name: "gateway_http_requests_total",
      help: "HTTP requests answered, by route pattern (`unmatched` for none), method and status.",
      labelNames: ["route", "method", "status"],
      registers,
    });
    this.chatRequests = new TalliedCounter({
      name: "gateway_chat_requests_total",
      help: "Chat completion requests by outcome: complete, error, refused or cancelled.",
      labelNames: ["outcome"],
      registers,
    });
    this.overhead = new TalliedHistogram({
      name: "gateway_overhead_seconds",
      help: "Time a dispatched chat request spent in the gateway outside provider calls (total minus upstream).",
      buckets: OVERHEAD_BUCKETS,
      registers,
    });
    this.upstreamLatency = new TalliedHistogram({
      name: "gateway_upstream_latency_seconds",
      help: "Duration of one provider call, by provider and outcome (ok or error); a stream counts to its end.",
      labelNames: ["provider", "outcome"],
      buckets: UPSTREAM_BUCKETS,
      registers,
    });
    this.upstreamAttempts = new TalliedCounter({
      name: "gateway_upstream_attempts_total",
      help: "Provider calls by provider and the HTTP status it answered (`none` when it was never reached).",
      labelNames: ["provider", "status"],
      registers,
    });
    this.circuitOpenDispatches = new Counter({
      name: "gateway_circuit_open_dispatches_total",
      help: "Provider calls made although the endpoint's circuit was open, because nothing else in the cascade was left to try.",
      labelNames: ["provider"],
      registers,
    });
    this.timeToFirstToken = new TalliedHistogram({
      name: "gateway_time_to_first_token_seconds",
      help: "Streams: time from the request's arrival to the first content chunk.",
      buckets: TTFT_BUCKETS,
      registers,
    });
    this.circuitOpen = new Gauge({
      name: "gateway_circuit_open",
      help: "1 while an endpoint's circuit breaker is open or half-open, 0 once it closed again.",
      labelNames: ["endpoint"],
      registers,
    });
    this.leaseAdmissions = new Counter({
      name: "gateway_lease_admissions_total",
      help: "Requests under hard ceilings admitted from a spend lease, without a ledger Admit call.",
      registers,
    });
    this.leaseCalls = new Counter({
      name: "gateway_ledger_lease_calls_total",
      help: "Lease calls to the ledger by outcome: granted, refused (too little headroom) or failed.",
      labelNames: ["outcome"],
      registers,
    });
    this.rateLimitRefusals = new Counter({
      name: "gateway_rate_limit_refusals_total",
      help: "Requests refused with 429 rate_limited, by limit name (management, catalog, activity_export, auth_exchange, ...).",
      labelNames: ["limit"],
      registers,
    });
    this.runawayFlags = new Counter({
      name: "gateway_runaway_flags_total",
      help: "Runaway flags received: paused (a key paused), unchanged (revoked, unknown or already paused), duplicate (applied before) or alert (nothing to pause).",
      labelNames: ["result"],
      registers,
    });
    this.contentFilterMatches = new Counter({
      name: "gateway_content_filter_matches_total",
      help: "Requests in which a content-filter detector matched, by action (block, redact, flag); one count per label.",
      labelNames: ["action"],
      registers,
    });
    // Read from the cache's own counters at scrape time: nothing is added to the lookup path.
    const cacheCounter = (name: string, help: string, read: (s: LoadingCacheStats) => number) => {
      let reported = 0;
      const stats = () => this.authCacheStats?.();
      return new Counter({
        name,
        help,
        registers,
        collect() {
          const s = stats();
          if (!s) return;
          const now = read(s);
          if (now > reported) this.inc(now - reported);
          reported = now;
        },
      });
    };
    const pendingClosings = () => this.closingsPending?.();
    new Gauge({
      name: "gateway_ledger_closings_pending",
      help: "Settlements and releases not yet accepted by the ledger (sent in batches; grows while the ledger is away).",
      registers,
      collect() {
        const size = pendingClosings();
        if (size !== undefined) this.set(size);
      },
    });
    cacheCounter("gateway_auth_cache_hits_total", "Key lookups answered from the auth cache.", (s) => s.hits);
    cacheCounter("gateway_auth_cache_misses_total", "Key lookups that went to the database (absent or expired).", (s) => s.misses + s.stale);
    cacheCounter(
      "gateway_auth_cache_refreshes_total",
      "Key lookups answered from the auth cache that also reloaded the entry in the background (8 s or older, of the 10 s lifetime).",
      (s) => s.refreshes,
    );
  }

  /** Counts every answered request; mount before any route. */
  httpMiddleware(): RequestHandler {
    return (req: Request, res: Response, next) => {
      res.once("close", () => {
        const matched = req.route as { path?: unknown } | undefined;
        const path = matched?.path;
        const route = Array.isArray(path) ? path.join(",") : typeof path === "string" ? req.baseUrl + path : "unmatched";
        this.httpRequests.inc({ route, method: req.method, status: String(res.statusCode) });
      });
      next();
    };
  }

  /** Counts a request of a route served outside express (the chat route), as `httpMiddleware` does. */
  countHttp(route: string, method: string, status: number): void {
    this.httpRequests.inc({ route, method, status: String(status) });
  }

  /** One chat completion request ended: its outcome, overhead, attempts and time to first token. */
  chatFinished(o: FinishedChat): void {
    this.chatRequests.inc({ outcome: o.status });
    if (o.routingOverheadMs !== null) this.overhead.observe({}, o.routingOverheadMs / 1000);
    if (o.streamed && o.ttftMs !== null) this.timeToFirstToken.observe({}, o.ttftMs / 1000);
    for (const a of o.attempts) {
      const provider = a.candidate.providerSlug;
      this.upstreamAttempts.inc({ provider, status: a.httpStatus === null ? "none" : String(a.httpStatus) });
      if (a.circuitOpen) this.circuitOpenDispatches.inc({ provider });
      if (a.durationMs !== null) {
        this.upstreamLatency.observe({ provider, outcome: a.errorCode ? "error" : "ok" }, a.durationMs / 1000);
      }
    }
  }

  /** A circuit breaker changed state (wired as the dispatcher's `onCircuitChange`). */
  readonly circuitChanged = (endpointId: string, open: boolean): void => {
    this.circuitOpen.set({ endpoint: endpointId }, open ? 1 : 0);
  };

  /** Spend leases: wired as SpendLeases' `onLeaseAdmission` and `onLeaseCall`. */
  readonly leaseAdmitted = (): void => {
    this.leaseAdmissions.inc();
  };

  readonly leaseCalled = (outcome: "granted" | "refused" | "failed"): void => {
    this.leaseCalls.inc({ outcome });
  };

  /** A request was refused by the rate limit `limit` (wired as GatewayRateLimits' `onRefused`). */
  readonly rateLimited = (limit: string): void => {
    this.rateLimitRefusals.inc({ limit });
  };

  /** A content-filter detector matched a request (wired as ContentFilters' `onMatch`). */
  readonly contentFilterMatched = (action: "block" | "redact" | "flag"): void => {
    this.contentFilterMatches.inc({ action });
  };

  /** A runaway flag was handled (wired as the runaway consumer's `onFlag`). */
  readonly runawayFlagHandled = (result: "paused" | "unchanged" | "duplicate" | "alert"): void => {
    this.runawayFlags.inc({ result });
  };

  /** Reports the settlements and releases waiting for the ledger, read at scrape time. */
  watchClosings(size: () => number): void {
    this.closingsPending = size;
  }

  /** Reports the auth cache's hits and misses from its own counters. */
  watchAuthCache(stats: () => LoadingCacheStats): void {
    this.authCacheStats = stats;
  }
}
