import { chatBodySchema, type ChatMessage, type ChatRequest, type ContentPart } from "@router/chat-request";
import { requestedMaxTokens, stopListWithin, unreadablePart } from "../message-content";
import type { UpstreamHttpRequest, UpstreamTarget } from "../types";
import type { OpenAiProfile } from "./profiles";

/**
 * A message as this provider takes it. Only the fields of the OpenAI format are copied: what a
 * client echoes of an earlier answer (`reasoning`, `reasoning_details`) is not part of it, nor is a
 * tool message's `is_error` (a failed tool's result goes as its content alone, unmarked), and
 * strict servers refuse unknown keys. `developer` becomes `system` where the role is unknown, and
 * `name` is left off where the provider refuses it.
 */
function wireMessage(m: ChatMessage, i: number, profile: OpenAiProfile, provider: string): Record<string, unknown> {
  const role = m.role === "developer" && !profile.developerRole ? "system" : m.role;
  if (m.role === "user" && Array.isArray(m.content)) checkReadable(m.content, i, profile, provider);
  const out: Record<string, unknown> = { role };
  if (m.content !== undefined) out.content = withoutCacheMarkers(m.content);
  if (m.name !== undefined && (profile.messageNames === "all" || m.role === "tool")) out.name = m.name;
  if (m.role === "assistant" && m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
  if (m.role === "tool") out.tool_call_id = m.tool_call_id;
  return out;
}

/** File and audio parts go as they are to a provider that reads them; for another the request is not built. */
function checkReadable(parts: ContentPart[], i: number, profile: OpenAiProfile, provider: string): void {
  parts.forEach((p, j) => {
    if (p.type === "file" && !profile.fileParts) throw unreadablePart(`messages.${i}.content.${j}`, provider, "file parts");
    if (p.type === "input_audio" && !profile.audioParts) throw unreadablePart(`messages.${i}.content.${j}`, provider, "audio");
  });
}

/** OpenAI caches prefixes by itself (and by `prompt_cache_key`): Anthropic's markers are not its fields. */
function withoutCacheMarkers(content: ChatMessage["content"]): ChatMessage["content"] {
  if (!Array.isArray(content) || !content.some((p) => "cache_control" in p)) return content;
  return (content as Record<string, unknown>[]).map(({ cache_control: _marker, ...part }) => part) as ChatMessage["content"];
}

/** The chat request for an OpenAI-compatible provider: mostly as given, model replaced. */
export function buildOpenAiRequest(
  req: ChatRequest,
  target: UpstreamTarget,
  stream: boolean,
  profile: OpenAiProfile,
): UpstreamHttpRequest {
  return httpRequest(openAiBody(req, target, stream, profile), target, stream);
}

/** Top-level and message fields Router reads from a chat completions body: never passed on as they are. */
const ROUTER_READ_FIELDS = new Set(Object.keys(chatBodySchema.shape));
const MESSAGE_FIELDS = new Set(["role", "content", "name", "tool_calls", "tool_call_id", "reasoning", "reasoning_details"]);

/**
 * The request from a client's own chat completions body (same-family fidelity): built as any
 * request is, then every top-level field Router does not read that the provider takes
 * (`profile.passesUnknownFields`), and every message field, is added as the client wrote it.
 */
export function buildOpenAiNativeRequest(
  native: Record<string, unknown>,
  req: ChatRequest,
  target: UpstreamTarget,
  stream: boolean,
  profile: OpenAiProfile,
): UpstreamHttpRequest {
  const body = openAiBody(req, target, stream, profile);
  const takes = profile.passesUnknownFields;
  if (takes === false) return httpRequest(body, target, stream);
  for (const [k, v] of Object.entries(native)) {
    if (!ROUTER_READ_FIELDS.has(k) && !(k in body) && (takes === true || takes.has(k))) body[k] = v;
  }
  const wire = body.messages as Record<string, unknown>[];
  const mine = native.messages;
  if (Array.isArray(mine) && mine.length === wire.length) {
    mine.forEach((raw, i) => {
      const m = raw as Record<string, unknown>;
      const out = wire[i]!;
      for (const [k, v] of Object.entries(m)) if (!MESSAGE_FIELDS.has(k)) out[k] = v;
    });
  }
  return httpRequest(body, target, stream);
}

function httpRequest(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  const headers: Record<string, string> = {
    authorization: `Bearer ${target.apiKey}`,
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  return { url: new URL(`${target.baseUrl.replace(/\/+$/, "")}/chat/completions`), headers, body: JSON.stringify(body) };
}

function openAiBody(req: ChatRequest, target: UpstreamTarget, stream: boolean, profile: OpenAiProfile): Record<string, unknown> {
  // Checked first: a request with more stop sequences than the provider takes is not built at all.
  stopListWithin(req, target.providerSlug, profile.maxStopSequences);
  const body: Record<string, unknown> = {
    model: target.upstreamModel,
    messages: req.messages.map((m, i) => wireMessage(m, i, profile, target.providerSlug)),
  };
  if (stream) {
    body.stream = true;
    // Usage arrives only when asked for where the option exists; the router always needs it.
    if (profile.streamOptions) body.stream_options = { include_usage: true };
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
  return body;
}
