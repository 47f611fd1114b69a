import type { ChatMessage, ChatRequest, ContentPart } from "@router/chat-request";
import { parseRecord, UnsupportedRequest, type FinishReason } from "./types";

/** The text of a message's content, parts joined; images are not text and are left out. */
export function textOf(content: ChatMessage["content"] | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  let out = "";
  for (const part of content as ContentPart[]) if (part.type === "text") out += part.text;
  return out;
}

export interface ParsedImage {
  /** Set for a data URL. */
  base64?: { mediaType: string; data: string };
  /** Set for an http(s) URL. */
  url?: string;
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,(.*)$/is;

export function parseImageUrl(url: string): ParsedImage {
  const m = DATA_URL.exec(url);
  if (m) return { base64: { mediaType: (m[1] ?? "").toLowerCase(), data: m[2] ?? "" } };
  return { url };
}

/** A base64 data URL's media type (lower-cased) and data; null for anything else. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([^;,]+);base64,(.*)$/is.exec(url);
  return m ? { mediaType: (m[1] ?? "").toLowerCase(), data: m[2] ?? "" } : null;
}

/**
 * A content part the provider cannot read (a file or audio part, `messages.<i>.content.<j>`): the
 * request is not built, so the cascade moves on to an endpoint that can, and a request none can
 * read is a 400 naming the part.
 */
export function unreadablePart(field: string, provider: string, what: string): UnsupportedRequest {
  return new UnsupportedRequest(field, `${provider} cannot read ${what}`);
}

const EXTENSION_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  heif: "image/heif",
};

/** A media type guessed from a URL's file extension, for providers that want one beside the URL. */
export function mediaTypeOfUrl(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return (ext && EXTENSION_TYPES[ext]) || "image/jpeg";
}

/** The system prompt: every system and developer message, in order. */
export function systemPrompt(req: ChatRequest): string {
  const parts: string[] = [];
  for (const m of req.messages) if (m.role === "system" || m.role === "developer") parts.push(textOf(m.content));
  return parts.join("\n\n");
}

/** The completion budget the client asked for; `max_completion_tokens` is the newer name. */
export function requestedMaxTokens(req: ChatRequest): number | undefined {
  return req.max_completion_tokens ?? req.max_tokens;
}

/**
 * The request with its completion budget cut to the endpoint's maximum output (0: unknown), since
 * providers refuse more; the same object when it fits. Agents ask every model for their own default.
 */
export function withinMaxOutput(req: ChatRequest, maxOutput: number): ChatRequest {
  const over = (n: number | undefined) => maxOutput > 0 && n !== undefined && n > maxOutput;
  if (!over(req.max_tokens) && !over(req.max_completion_tokens)) return req;
  const out = { ...req };
  if (over(req.max_tokens)) out.max_tokens = maxOutput;
  if (over(req.max_completion_tokens)) out.max_completion_tokens = maxOutput;
  return out;
}

/** The stop sequences as a list. */
export function stopList(req: ChatRequest): string[] | undefined {
  if (req.stop === undefined || req.stop === null) return undefined;
  const list = typeof req.stop === "string" ? [req.stop] : req.stop;
  return list.length ? list : undefined;
}

/**
 * The request's stop sequences for a provider that takes at most `limit` (null: no known limit).
 * More is refused before sending, so the dispatcher tries the next endpoint instead of a 400.
 */
export function stopListWithin(req: ChatRequest, providerSlug: string, limit: number | null): string[] | undefined {
  const stops = stopList(req);
  if (stops && limit !== null && stops.length > limit) {
    throw new UnsupportedRequest("stop", `${providerSlug} takes at most ${limit} stop sequences`);
  }
  return stops;
}

/** Tool-call arguments as the JSON object that providers with typed tool input need. */
export function toolArgumentsObject(args: string, field: string): Record<string, unknown> {
  const obj = parseRecord(args);
  if (!obj) throw new UnsupportedRequest(field, "tool call arguments must be a JSON object for this provider");
  return obj;
}

/**
 * Instruction that stands in for `response_format` on providers without a JSON mode of their own:
 * a deliberate mapping, since dropping the field would silently change what the caller gets.
 */
export function jsonInstruction(req: ChatRequest): string | null {
  const f = req.response_format;
  if (!f || f.type === "text") return null;
  if (f.type === "json_object") return "Respond with one valid JSON object and nothing else.";
  const schema = f.json_schema.schema ? ` It must conform to this JSON schema: ${JSON.stringify(f.json_schema.schema)}` : "";
  return `Respond with one valid JSON object and nothing else.${schema}`;
}

export const REASONING_FLOOR = 1024;

/** Share of the completion budget spent thinking, per effort level. */
const EFFORT_SHARE = { low: 0.2, medium: 0.5, high: 0.8 } as const;

/**
 * The thinking budget for a request's `reasoning` on a provider with extended thinking, or null when
 * reasoning is off. An effort is a share of the completion budget; the floor is 1024 tokens.
 */
export function thinkingBudget(req: ChatRequest, completionBudget: number): number | null {
  const r = req.reasoning;
  if (!r || r.enabled === false) return null;
  const wanted = r.max_tokens ?? Math.floor(completionBudget * EFFORT_SHARE[r.effort ?? "medium"]);
  return Math.max(REASONING_FLOOR, wanted);
}

/**
 * Extra completion tokens the reasoning budget may add on top of the requested maximum: the
 * thinking budget of the requested completion budget (Gemini adds all of it, Anthropic at most it).
 */
export function reasoningAllowance(req: ChatRequest): number {
  return thinkingBudget(req, requestedMaxTokens(req) ?? 0) ?? 0;
}

/**
 * Normalizes an OpenAI-style finish reason. Servers of this family spell some reasons their own
 * way; a value none of them documents counts as a normal stop (the native value travels beside),
 * since self-hosted servers mostly use such spellings for a plain end of sequence.
 */
export function normalizeOpenAiFinish(native: string | null): FinishReason | null {
  switch (native) {
    case null:
      return null;
    case "length":
    // Mistral: the prompt and completion reached the model's context length.
    case "model_length":
      return "length";
    case "tool_calls":
    // The legacy functions API.
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    case "error":
    // DeepSeek: the inference system ran out of resources and cut the answer off.
    case "insufficient_system_resource":
      return "error";
    default:
      return "stop";
  }
}
