// The event payloads of proto/router/events/v1, one namespace for all of them.
export { RequestCompleted, TokenUsage, UpstreamAttempt, UsageLine } from "./generated/router/events/v1/request_completed";
export { ThresholdCrossed } from "./generated/router/events/v1/threshold_crossed";
export { RunawayFlagged } from "./generated/router/events/v1/runaway_flagged";
