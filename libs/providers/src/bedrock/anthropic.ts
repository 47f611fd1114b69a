import type { ChatRequest } from "@router/chat-request";
import { anthropicNativeBody } from "../anthropic/native-request";
import { buildAnthropicRequest } from "../anthropic/request";
import { parseAnthropicCompletion } from "../anthropic/response";
import { createAnthropicStreamDecoder } from "../anthropic/stream";
import type { ProviderAdapter, UpstreamHttpRequest, UpstreamTarget } from "../types";
import { parseBedrockError } from "./errors";
import { invokeStreamFramer } from "./event-stream";
import type { BedrockSigner } from "./signing";
import { bedrockModelUrl } from "./url";

/** The Messages API version Bedrock takes in the body (instead of the `anthropic-version` header). */
export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

/**
 * Anthropic's own name for a Bedrock model id: `eu.anthropic.claude-sonnet-4-5-20250929-v1:0` →
 * `claude-sonnet-4-5-20250929`. The Anthropic builders decide by it what the model takes (a thinking
 * budget or adaptive thinking).
 */
export function anthropicModelName(bedrockModelId: string): string {
  return bedrockModelId.replace(/^(?:[a-z]{2,4}\.)?anthropic\./, "").replace(/-v\d+(?::\d+)?$/, "");
}

const asAnthropicTarget = (target: UpstreamTarget): UpstreamTarget => ({ ...target, upstreamModel: anthropicModelName(target.upstreamModel) });

/**
 * A Messages body as InvokeModel takes it: the model goes in the URL and streaming in the action,
 * the API version and beta flags in the body (`anthropic_version`, `anthropic_beta`).
 */
function invokeRequest(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  const { model: _model, stream: _stream, ...rest } = body;
  const beta = (target.vendorBeta ?? "")
    .split(",")
    .map((b) => b.trim())
    .filter((b) => b);
  const invoke: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  if (beta.length) invoke.anthropic_beta = beta;
  return {
    url: bedrockModelUrl(target, stream ? "invoke-with-response-stream" : "invoke"),
    headers: { "content-type": "application/json", accept: stream ? "application/vnd.amazon.eventstream" : "application/json" },
    body: JSON.stringify(invoke),
  };
}

/**
 * Claude on Bedrock through InvokeModel: Anthropic's Messages body and answer, so the Anthropic
 * adapter builds and reads them; a Messages-ingress body goes through with its cache markers
 * (Bedrock caches prompts for Claude). Streams come as event-stream frames, each carrying one
 * Anthropic event.
 */
export function bedrockAnthropicAdapter(signer: BedrockSigner): ProviderAdapter {
  return {
    family: "anthropic",
    authorize: (req, target) => signer.sign(req, target),
    createFramer: invokeStreamFramer,
    buildRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean) {
      const built = buildAnthropicRequest(req, asAnthropicTarget(target), stream);
      return invokeRequest(JSON.parse(built.body) as Record<string, unknown>, target, stream);
    },
    buildNativeRequest(native, req, target, stream) {
      return invokeRequest(anthropicNativeBody(native, req, asAnthropicTarget(target), stream), target, stream);
    },
    parseCompletion: parseAnthropicCompletion,
    createStreamDecoder: createAnthropicStreamDecoder,
    parseError: parseBedrockError,
  };
}
