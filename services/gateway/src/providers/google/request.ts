import type { ChatMessage, ChatRequest, ContentPart } from "../../chat/request-schema";
import { mediaTypeOfUrl, parseImageUrl, requestedMaxTokens, stopList, systemPrompt, textOf, REASONING_FLOOR } from "../message-content";
import { asRecord, parseRecord, type UpstreamHttpRequest, type UpstreamTarget } from "../types";

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

/** Thinking budgets per effort level for Gemini's thinkingConfig. */
const EFFORT_BUDGET = { low: REASONING_FLOOR, medium: 8192, high: 24576 } as const;

function imagePart(url: string): Part {
  const img = parseImageUrl(url);
  return img.base64
    ? { inlineData: { mimeType: img.base64.mediaType, data: img.base64.data } }
    : { fileData: { mimeType: mediaTypeOfUrl(url), fileUri: img.url } };
}

function userParts(content: string | ContentPart[]): Part[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  return content.map((p) => (p.type === "text" ? { text: p.text } : imagePart(p.image_url.url)));
}

/** A function response must be an object; plain text is wrapped. */
function functionResponse(text: string): Record<string, unknown> {
  return parseRecord(text) ?? { content: text };
}

function wireContents(messages: ChatMessage[]): Content[] {
  // Gemini names the function in a response, OpenAI only the call id: remember names by id.
  const nameOfCall = new Map<string, string>();
  const out: Content[] = [];
  const push = (role: Content["role"], parts: Part[]) => {
    if (!parts.length) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
      case "developer":
        break;
      case "user":
        push("user", userParts(m.content));
        break;
      case "assistant": {
        const parts: Part[] = [];
        const text = textOf(m.content);
        if (text) parts.push({ text });
        for (const c of m.tool_calls ?? []) {
          nameOfCall.set(c.id, c.function.name);
          parts.push({ functionCall: { name: c.function.name, args: asRecord(JSON.parse(c.function.arguments)) ?? {} } });
        }
        push("model", parts);
        break;
      }
      case "tool":
        push("user", [
          { functionResponse: { name: nameOfCall.get(m.tool_call_id) ?? m.name ?? m.tool_call_id, response: functionResponse(textOf(m.content)) } },
        ]);
        break;
    }
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
  const body: Record<string, unknown> = { contents: wireContents(req.messages) };
  const system = systemPrompt(req);
  if (system) body.systemInstruction = { parts: [{ text: system }] };

  const config: Record<string, unknown> = {};
  const maxTokens = requestedMaxTokens(req);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.top_p !== undefined) config.topP = req.top_p;
  if (req.top_k !== undefined) config.topK = req.top_k;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.frequency_penalty !== undefined) config.frequencyPenalty = req.frequency_penalty;
  if (req.presence_penalty !== undefined) config.presencePenalty = req.presence_penalty;
  const stops = stopList(req);
  if (stops) config.stopSequences = stops;
  const format = req.response_format;
  if (format && format.type !== "text") {
    config.responseMimeType = "application/json";
    if (format.type === "json_schema" && format.json_schema.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  const r = req.reasoning;
  if (r && r.enabled !== false) {
    config.thinkingConfig = {
      thinkingBudget: Math.max(REASONING_FLOOR, r.max_tokens ?? EFFORT_BUDGET[r.effort ?? "medium"]),
      includeThoughts: r.exclude !== true,
    };
  }
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

  const base = target.baseUrl.replace(/\/+$/, "");
  const root = /\/v\d+(beta|alpha)?\d*$/.test(base) ? base : `${base}/v1beta`;
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  const url = new URL(`${root}/models/${encodeURIComponent(target.upstreamModel)}:${method}`);
  const headers: Record<string, string> = {
    "x-goog-api-key": target.apiKey,
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  return { url, headers, body: JSON.stringify(body) };
}
