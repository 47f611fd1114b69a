import type { AudioPart, ChatMessage, ChatRequest, ContentPart, FilePart } from "@router/chat-request";
import {
  mediaTypeOfUrl,
  parseDataUrl,
  parseImageUrl,
  requestedMaxTokens,
  stopListWithin,
  systemPrompt,
  textOf,
  thinkingBudget,
  toolArgumentsObject,
  unreadablePart,
} from "../message-content";
import { parseRecord, type UpstreamHttpRequest, type UpstreamTarget } from "../types";

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

/** Gemini takes at most this many stop sequences. */
const MAX_STOP_SEQUENCES = 5;

/** The largest thinking budget Gemini documents: 24576 for Flash models, 32768 for Pro. */
const MAX_THINKING_BUDGET = { flash: 24576, pro: 32768 } as const;

/** Gemini Pro models: a larger thinking budget, and thinking cannot be turned off. */
const isProModel = (upstreamModel: string): boolean => /(?:^|[-_./])pro(?:[-_./]|$)/i.test(upstreamModel);

function imagePart(url: string): Part {
  const img = parseImageUrl(url);
  return img.base64
    ? { inlineData: { mimeType: img.base64.mediaType, data: img.base64.data } }
    : { fileData: { mimeType: mediaTypeOfUrl(url), fileUri: img.url } };
}

/** Gemini reads files and audio inline by media type (PDFs, text, images, audio); a Files API id of OpenAI's it cannot. */
function inlinePart(p: FilePart | AudioPart, field: string, provider: string): Part {
  if (p.type === "input_audio") return { inlineData: { mimeType: `audio/${p.input_audio.format}`, data: p.input_audio.data } };
  const data = p.file.file_data === undefined ? null : parseDataUrl(p.file.file_data);
  if (!data) throw unreadablePart(field, provider, "a file by file_id");
  return { inlineData: { mimeType: data.mediaType, data: data.data } };
}

function userParts(content: string | ContentPart[], field: string, provider: string): Part[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  return content.map((p, j) => {
    if (p.type === "text") return { text: p.text };
    if (p.type === "image_url") return imagePart(p.image_url.url);
    return inlinePart(p, `${field}.${j}`, provider);
  });
}

/**
 * A function response must be an object; plain text is wrapped. A failed tool's result goes under
 * `error`, the key Gemini documents for a function's error details.
 */
function functionResponse(text: string, isError: boolean): Record<string, unknown> {
  if (isError) return { error: parseRecord(text) ?? text };
  return parseRecord(text) ?? { content: text };
}

function wireContents(messages: ChatMessage[], provider: string): Content[] {
  // Gemini names the function in a response, OpenAI only the call id: remember names by id.
  const nameOfCall = new Map<string, string>();
  const out: Content[] = [];
  const push = (role: Content["role"], parts: Part[]) => {
    if (!parts.length) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  messages.forEach((m, i) => {
    switch (m.role) {
      case "system":
      case "developer":
        return;
      case "user":
        return push("user", userParts(m.content, `messages.${i}.content`, provider));
      case "assistant": {
        const parts: Part[] = [];
        const text = textOf(m.content);
        if (text) parts.push({ text });
        m.tool_calls?.forEach((c, j) => {
          nameOfCall.set(c.id, c.function.name);
          const args = toolArgumentsObject(c.function.arguments, `messages.${i}.tool_calls.${j}.function.arguments`);
          parts.push({ functionCall: { name: c.function.name, args } });
        });
        return push("model", parts);
      }
      case "tool":
        return push("user", [
          { functionResponse: { name: nameOfCall.get(m.tool_call_id) ?? m.name ?? m.tool_call_id, response: functionResponse(textOf(m.content), m.is_error === true) } },
        ]);
    }
  });
  return out;
}

interface OutputConfig {
  maxOutputTokens?: number;
  thinkingConfig?: { thinkingBudget: number; includeThoughts?: boolean };
}

/**
 * maxOutputTokens and thinkingConfig together, since thoughts count against maxOutputTokens on
 * Gemini: the answer keeps the room the caller asked for and the thinking budget comes on top
 * (capped at the endpoint's max output), as with Anthropic. An effort is a share of the completion
 * budget, or of the model's largest thinking budget when the caller set none.
 */
function outputConfig(req: ChatRequest, target: UpstreamTarget): OutputConfig {
  const requested = requestedMaxTokens(req);
  const pro = isProModel(target.upstreamModel);
  const maxBudget = pro ? MAX_THINKING_BUDGET.pro : MAX_THINKING_BUDGET.flash;
  const wanted = thinkingBudget(req, requested ?? maxBudget);
  const budget = wanted === null ? null : Math.min(wanted, maxBudget);
  const out: OutputConfig = {};
  if (requested !== undefined) {
    const total = requested + (budget ?? 0);
    out.maxOutputTokens = target.maxOutputTokens > 0 ? Math.min(total, target.maxOutputTokens) : total;
  }
  if (budget !== null) {
    out.thinkingConfig = { thinkingBudget: budget, includeThoughts: req.reasoning?.exclude !== true };
  } else if (req.reasoning?.enabled === false && !pro) {
    // Flash models think by default and 0 turns that off; Pro models cannot stop thinking.
    out.thinkingConfig = { thinkingBudget: 0 };
  }
  return out;
}

function toolConfig(req: ChatRequest): Record<string, unknown> | undefined {
  const c = req.tool_choice;
  if (c === undefined) return undefined;
  if (c === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (c === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (c === "required") return { functionCallingConfig: { mode: "ANY" } };
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [c.function.name] } };
}

/** The generateContent request for a chat request (pure). */
export function buildGeminiRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  const body: Record<string, unknown> = { contents: wireContents(req.messages, target.providerSlug) };
  const system = systemPrompt(req);
  if (system) body.systemInstruction = { parts: [{ text: system }] };

  const stops = stopListWithin(req, "google", MAX_STOP_SEQUENCES);
  const { maxOutputTokens, thinkingConfig } = outputConfig(req, target);
  const config: Record<string, unknown> = {};
  if (maxOutputTokens !== undefined) config.maxOutputTokens = maxOutputTokens;
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.top_p !== undefined) config.topP = req.top_p;
  if (req.top_k !== undefined) config.topK = req.top_k;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.frequency_penalty !== undefined) config.frequencyPenalty = req.frequency_penalty;
  if (req.presence_penalty !== undefined) config.presencePenalty = req.presence_penalty;
  if (stops) config.stopSequences = stops;
  const format = req.response_format;
  if (format && format.type !== "text") {
    config.responseMimeType = "application/json";
    if (format.type === "json_schema" && format.json_schema.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  if (thinkingConfig) config.thinkingConfig = thinkingConfig;
  if (Object.keys(config).length) body.generationConfig = config;

  if (req.tools?.length) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => ({
          name: t.function.name,
          ...(t.function.description ? { description: t.function.description } : {}),
          // parametersJsonSchema takes full JSON Schema; the older `parameters` refuses keys like additionalProperties.
          ...(t.function.parameters ? { parametersJsonSchema: t.function.parameters } : {}),
        })),
      },
    ];
    const cfg = toolConfig(req);
    if (cfg) body.toolConfig = cfg;
  }

  const root = geminiApiRoot(target.baseUrl);
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  const url = new URL(`${root}/models/${encodeURIComponent(target.upstreamModel)}:${method}`);
  const headers: Record<string, string> = {
    "x-goog-api-key": target.apiKey,
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  return { url, headers, body: JSON.stringify(body) };
}

/** The API root with its version segment: a base URL without one gets `/v1beta`. */
export function geminiApiRoot(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  return /\/v\d+(beta|alpha)?\d*$/.test(base) ? base : `${base}/v1beta`;
}
