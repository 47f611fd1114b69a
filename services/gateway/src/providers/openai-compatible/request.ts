import type { ChatMessage, ChatRequest } from "../../chat/request-schema";
import { requestedMaxTokens } from "../message-content";
import type { UpstreamHttpRequest, UpstreamTarget } from "../types";
import type { OpenAiProfile } from "./profiles";

/** Messages as OpenAI takes them; echoed reasoning of earlier turns is not part of the format. */
function wireMessage(m: ChatMessage): unknown {
  if (m.role === "assistant" && m.reasoning !== undefined) {
    const { reasoning: _r, ...rest } = m;
    return rest;
  }
  return m;
}

/** The chat request for an OpenAI-compatible provider: mostly as given, model replaced. */
export function buildOpenAiRequest(
  req: ChatRequest,
  target: UpstreamTarget,
  stream: boolean,
  profile: OpenAiProfile,
): UpstreamHttpRequest {
  const body: Record<string, unknown> = { model: target.upstreamModel, messages: req.messages.map(wireMessage) };
  if (stream) {
    body.stream = true;
    // Usage arrives only when asked for; the router always needs it.
    body.stream_options = { include_usage: true };
  }
  const maxTokens = requestedMaxTokens(req);
  if (maxTokens !== undefined) body[profile.maxTokensField] = maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined && profile.topK) body.top_k = req.top_k;
  if (req.frequency_penalty !== undefined) body.frequency_penalty = req.frequency_penalty;
  if (req.presence_penalty !== undefined) body.presence_penalty = req.presence_penalty;
  if (req.stop !== undefined && req.stop !== null) body.stop = req.stop;
  if (req.seed !== undefined && profile.seedField) body[profile.seedField] = req.seed;
  if (req.tools?.length) {
    body.tools = req.tools;
    if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
    if (req.parallel_tool_calls !== undefined) body.parallel_tool_calls = req.parallel_tool_calls;
  }
  if (req.response_format) body.response_format = req.response_format;
  if (req.reasoning?.effort && req.reasoning.enabled !== false && profile.reasoningEffort) {
    body.reasoning_effort = req.reasoning.effort;
  }
  if (req.user !== undefined && profile.user) body.user = req.user;
  if (req.prompt_cache_key !== undefined && profile.promptCacheKey) body.prompt_cache_key = req.prompt_cache_key;

  const headers: Record<string, string> = {
    authorization: `Bearer ${target.apiKey}`,
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  return { url: new URL(`${target.baseUrl.replace(/\/+$/, "")}/chat/completions`), headers, body: JSON.stringify(body) };
}
