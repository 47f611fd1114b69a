import type { events } from "@router/proto";

/** What one upstream attempt says about its endpoint's health. */
export type AttemptOutcome = "ok" | "failure" | "ignored";

// Failures the gateway records that are about the request or the caller, not the endpoint.
// `router.request_not_sent`: Router could not build or send the request, so the provider never saw it.
const NOT_THE_ENDPOINT = new Set(["router.unsupported_request", "router.request_not_sent", "router.client_cancelled"]);

/**
 * Mirrors what the gateway's per-endpoint circuit breakers count: 5xx answers, timeouts, broken
 * connections, empty or broken streams and unreadable answers are failures; a 3xx or 4xx (this caller's
 * request, credential or rate limit) and a cancelled, inexpressible or unsent request say nothing about
 * the endpoint. A stream that broke after content was sent is recorded as ok by the gateway and
 * counted ok here.
 */
export function outcomeOf(attempt: events.UpstreamAttempt): AttemptOutcome {
  if (attempt.status === "ok") return "ok";
  if (attempt.status !== "error") return "ignored";
  const http = attempt.httpStatus;
  // A 3xx (a provider behind a redirect) is not a 5xx either: the breaker does not count it.
  if (http !== undefined && http >= 300 && http < 500) return "ignored";
  return NOT_THE_ENDPOINT.has(attempt.errorCode) ? "ignored" : "failure";
}
