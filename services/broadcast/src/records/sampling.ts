import { ROOT_CONTEXT } from "@opentelemetry/api";
import { SamplingDecision, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace";
import { traceIdOf } from "./request-span";

/**
 * Whether a request goes to a destination with this sample rate: OpenTelemetry's trace-id ratio
 * sampler on the request's trace id, so the choice is the same on every replay and every replica,
 * and rates nest (a request sent to a 10% destination also goes to every 50% one). 1 sends all, 0
 * none.
 */
export function isSampled(requestId: string, sampleRate: number): boolean {
  // The sampler is two numbers; building one per call keeps nothing per rate in memory.
  const sampler = new TraceIdRatioBasedSampler(sampleRate);
  const result = sampler.shouldSample(ROOT_CONTEXT, traceIdOf(requestId));
  return result.decision === SamplingDecision.RECORD_AND_SAMPLED;
}
