import type { routing } from "@router/proto";
import { chatBodySchema, type ChatRequest } from "@router/chat-request";

// The settings a preset holds that apply outside routing, checked as the chat route checks them.
const PresetParams = chatBodySchema.pick({ temperature: true, top_p: true, top_k: true, max_tokens: true, seed: true, reasoning: true });

/**
 * The request with the named preset's sampling settings filled in where the request sets none
 * (routing already merged the routing settings). `max_tokens` counts as set when the request has
 * `max_completion_tokens`. Settings that do not read back as the chat route would accept them are
 * left out rather than sent upstream (routing validated them when the preset was saved).
 */
export function withPresetParams(request: ChatRequest, preset: routing.PresetApplied | undefined): ChatRequest {
  if (!preset?.paramsJson) return request;
  let parsed: unknown;
  try {
    parsed = JSON.parse(preset.paramsJson);
  } catch {
    return request;
  }
  const params = PresetParams.safeParse(parsed);
  if (!params.success) return request;
  const filled: ChatRequest = { ...request };
  const p = params.data;
  if (filled.temperature === undefined && p.temperature !== undefined) filled.temperature = p.temperature;
  if (filled.top_p === undefined && p.top_p !== undefined) filled.top_p = p.top_p;
  if (filled.top_k === undefined && p.top_k !== undefined) filled.top_k = p.top_k;
  if (filled.seed === undefined && p.seed !== undefined) filled.seed = p.seed;
  if (filled.reasoning === undefined && p.reasoning !== undefined) filled.reasoning = p.reasoning;
  if (filled.max_tokens === undefined && filled.max_completion_tokens === undefined && p.max_tokens !== undefined) {
    filled.max_tokens = p.max_tokens;
  }
  return filled;
}
