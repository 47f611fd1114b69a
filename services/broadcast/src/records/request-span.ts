import { createHash } from "node:crypto";
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type SpanStatus } from "@opentelemetry/api";
import { hrTimeDuration, millisToHrTime } from "@opentelemetry/core";
import type * as OtlpTransformer from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { toUsd } from "@router/money";
import type { events } from "@router/proto";
import { requestDurationMs } from "./request-record";

/** The OTLP serializer (and the metrics SDK it brings) is loaded when the first span is sent. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const otlpJson = () => (require("@opentelemetry/otlp-transformer") as typeof OtlpTransformer).JsonTraceSerializer;

/**
 * GenAI attribute names of the OpenTelemetry semantic conventions. They are still "incubating", and
 * OpenTelemetry asks users to copy incubating names rather than import that entry point (it may
 * break in a minor release).
 */
const GEN_AI = {
  operationName: "gen_ai.operation.name",
  system: "gen_ai.system",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
} as const;

/** The service the spans describe, as receivers group them. */
const RESOURCE = resourceFromAttributes({ [ATTR_SERVICE_NAME]: "router" });
const SCOPE = { name: "router.broadcast", version: "1" };

/**
 * Trace and span ids from the request id, so the span of one request always has the same ids (a
 * receiver that gets it twice sees one span), and the sampling decision, taken on the trace id,
 * is the same every time.
 */
export function traceIdOf(requestId: string): string {
  return createHash("sha256").update(`router-trace:${requestId}`).digest("hex").slice(0, 32);
}

function spanIdOf(requestId: string): string {
  return createHash("sha256").update(`router-span:${requestId}`).digest("hex").slice(0, 16);
}

function statusOf(e: events.RequestCompleted): SpanStatus {
  if (e.status === "error" || e.status === "refused") {
    return { code: SpanStatusCode.ERROR, message: e.errorCode || e.status };
  }
  return { code: SpanStatusCode.UNSET };
}

/** Attributes without the empty ones: an unknown value is left out, never sent as "". */
function present(entries: Record<string, string | number | boolean | string[] | undefined>): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(entries)) {
    if (value === undefined || value === "") continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[name] = value;
  }
  return out;
}

/** The span's attributes: `gen_ai.*` where the conventions name the fact, `router.*` for the rest. */
export function spanAttributes(e: events.RequestCompleted, opts: { test: boolean }): Attributes {
  const usage = e.usage;
  return present({
    [GEN_AI.operationName]: "chat",
    [GEN_AI.system]: e.providerSlug,
    [GEN_AI.providerName]: e.providerSlug,
    [GEN_AI.requestModel]: e.requestedModel,
    [GEN_AI.responseModel]: e.servedModel,
    [GEN_AI.responseId]: e.requestId,
    [GEN_AI.finishReasons]: e.finishReason === "" ? undefined : [e.finishReason],
    [GEN_AI.inputTokens]: usage?.promptTokens,
    [GEN_AI.outputTokens]: usage?.completionTokens,
    [GEN_AI.conversationId]: e.sessionId,
    [GEN_AI.agentName]: e.agent,
    [ATTR_ERROR_TYPE]: e.status === "error" || e.status === "refused" ? e.errorCode || e.status : undefined,
    "router.request.id": e.requestId,
    "router.status": e.status,
    "router.streamed": e.streamed,
    "router.byok": e.isByok,
    "router.cost.total_usd": toUsd(e.billedCostNanodollars),
    "router.cost.list_usd": toUsd(e.listCostNanodollars),
    "router.usage.cached_tokens": usage?.cachedTokens,
    "router.usage.reasoning_tokens": usage?.reasoningTokens,
    "router.ttft_ms": e.ttftMs,
    "router.generation_ms": e.generationMs,
    "router.routing_overhead_ms": e.routingOverheadMs,
    "router.key.name": e.keyName,
    "router.workspace.id": e.workspaceId,
    "router.workspace.name": e.workspaceName,
    "router.agent": e.agent,
    "router.session.id": e.sessionId,
    "router.run.id": e.runId,
    "router.test": opts.test ? true : undefined,
  });
}

/**
 * One completed request as an OpenTelemetry span: a client span named `chat <requested model>`
 * (the GenAI convention), from the request's arrival to its end (routing overhead plus provider
 * time), in its own trace.
 */
export function requestSpan(e: events.RequestCompleted, opts: { test: boolean }): ReadableSpan {
  const startMs = Number(e.createdAtMs);
  const startTime = millisToHrTime(startMs);
  const endTime = millisToHrTime(startMs + (requestDurationMs(e) ?? 0));
  const context = { traceId: traceIdOf(e.requestId), spanId: spanIdOf(e.requestId), traceFlags: TraceFlags.SAMPLED };
  return {
    name: e.requestedModel === "" ? "chat" : `chat ${e.requestedModel}`,
    kind: SpanKind.CLIENT,
    spanContext: () => context,
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: statusOf(e),
    attributes: spanAttributes(e, opts),
    links: [],
    events: [],
    ended: true,
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The OTLP/HTTP JSON export request (`ExportTraceServiceRequest`) carrying the request's span. */
export function otlpTraceBody(e: events.RequestCompleted, opts: { test: boolean }): string {
  const bytes = otlpJson().serializeRequest([requestSpan(e, opts)]);
  if (bytes === undefined) throw new Error("the OTLP serializer produced no body");
  return Buffer.from(bytes).toString("utf8");
}
