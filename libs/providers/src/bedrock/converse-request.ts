import type { ChatMessage, ChatRequest, ContentPart, FilePart } from "@router/chat-request";
import { jsonInstruction, parseDataUrl, parseImageUrl, requestedMaxTokens, stopList, textOf, toolArgumentsObject, unreadablePart } from "../message-content";
import { UnsupportedRequest, type UpstreamHttpRequest, type UpstreamTarget } from "../types";
import { bedrockModelUrl } from "./url";

type Block = Record<string, unknown>;
interface ConverseMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** Image formats Converse reads, by media type. */
const IMAGE_FORMATS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp" };
/** Document formats Converse reads, by media type. */
const DOCUMENT_FORMATS: Record<string, string> = {
  "application/pdf": "pdf",
  "text/plain": "txt",
  "text/csv": "csv",
  "text/html": "html",
  "text/markdown": "md",
};
/** Converse wants a document name of letters, digits, spaces, hyphens, parentheses and brackets. */
const documentName = (filename: string | undefined, index: number): string => {
  const cleaned = (filename ?? "").replace(/\.[a-z0-9]+$/i, "").replace(/[^A-Za-z0-9 ()[\]-]+/g, "-").replace(/\s{2,}/g, " ").trim().slice(0, 200);
  return cleaned || `document-${index + 1}`;
};

// A cache breakpoint after a block: Converse marks a prompt-cache prefix with a block of its own.
const CACHE_POINT: Block = { cachePoint: { type: "default" } };

function imageBlock(url: string, field: string, provider: string): Block {
  const img = parseImageUrl(url);
  const format = img.base64 ? IMAGE_FORMATS[img.base64.mediaType] : undefined;
  if (!img.base64) throw unreadablePart(field, provider, "an image by URL (Converse takes image bytes only)");
  if (!format) throw unreadablePart(field, provider, `an image of type ${img.base64.mediaType}`);
  return { image: { format, source: { bytes: img.base64.data } } };
}

function documentBlock(p: FilePart, field: string, provider: string, index: number): Block {
  const data = p.file.file_data === undefined ? null : parseDataUrl(p.file.file_data);
  if (!data) throw unreadablePart(field, provider, "a file by file_id");
  if (IMAGE_FORMATS[data.mediaType]) return { image: { format: IMAGE_FORMATS[data.mediaType], source: { bytes: data.data } } };
  const format = DOCUMENT_FORMATS[data.mediaType];
  if (!format) throw unreadablePart(field, provider, `a file of type ${data.mediaType}`);
  return { document: { format, name: documentName(p.file.filename, index), source: { bytes: data.data } } };
}

function userBlocks(content: string | ContentPart[], field: string, provider: string, documents: { count: number }): Block[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  const out: Block[] = [];
  content.forEach((p, j) => {
    switch (p.type) {
      case "text":
        if (p.text) out.push({ text: p.text });
        if (p.cache_control) out.push(CACHE_POINT);
        return;
      case "image_url":
        out.push(imageBlock(p.image_url.url, `${field}.${j}`, provider));
        return;
      case "file":
        out.push(documentBlock(p, `${field}.${j}`, provider, documents.count++));
        return;
      case "input_audio":
        throw unreadablePart(`${field}.${j}`, provider, "audio");
    }
  });
  return out;
}

/** OpenAI messages → Converse turns: system apart, tool results as user turns, same-role turns merged. */
function converseMessages(messages: ChatMessage[], provider: string): ConverseMessage[] {
  const out: ConverseMessage[] = [];
  const documents = { count: 0 };
  const push = (role: ConverseMessage["role"], blocks: Block[]) => {
    if (!blocks.length) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  messages.forEach((m, i) => {
    switch (m.role) {
      case "system":
      case "developer":
        return;
      case "user":
        return push("user", userBlocks(m.content, `messages.${i}.content`, provider, documents));
      case "assistant": {
        const blocks: Block[] = [];
        const text = textOf(m.content);
        if (text) blocks.push({ text });
        m.tool_calls?.forEach((c, j) =>
          blocks.push({
            toolUse: { toolUseId: c.id, name: c.function.name, input: toolArgumentsObject(c.function.arguments, `messages.${i}.tool_calls.${j}.function.arguments`) },
          }),
        );
        return push("assistant", blocks);
      }
      case "tool": {
        const text = textOf(m.content);
        const marked = Array.isArray(m.content) && m.content.some((p) => p.cache_control);
        push("user", [
          {
            // Converse refuses an empty text block; an empty result still answers the call.
            toolResult: { toolUseId: m.tool_call_id, content: text ? [{ text }] : [], ...(m.is_error ? { status: "error" } : {}) },
          },
          ...(marked ? [CACHE_POINT] : []),
        ]);
        return;
      }
    }
  });
  return out;
}

/** The system prompt as blocks, with a cache point after each marked part. */
function systemBlocks(req: ChatRequest): Block[] {
  const blocks: Block[] = [];
  for (const m of req.messages) {
    if (m.role !== "system" && m.role !== "developer") continue;
    if (typeof m.content === "string") {
      if (m.content) blocks.push({ text: m.content });
      continue;
    }
    for (const p of m.content) {
      if (p.type !== "text") continue;
      if (p.text) blocks.push({ text: p.text });
      if (p.cache_control) blocks.push(CACHE_POINT);
    }
  }
  // Converse has no JSON mode across models: the format is asked for in words, as for Anthropic.
  const instruction = jsonInstruction(req);
  if (instruction) blocks.push({ text: instruction });
  return blocks;
}

const hasToolBlocks = (messages: ConverseMessage[]): boolean => messages.some((m) => m.content.some((b) => "toolUse" in b || "toolResult" in b));

function toolConfig(req: ChatRequest, messages: ConverseMessage[]): Block | undefined {
  if (!req.tools?.length) {
    // Converse refuses tool blocks in the history without the tools they used.
    if (hasToolBlocks(messages)) throw new UnsupportedRequest("tools", "Converse needs the tools declared when the conversation holds tool calls or results");
    return undefined;
  }
  if (req.parallel_tool_calls === false) throw new UnsupportedRequest("parallel_tool_calls", "Converse cannot turn parallel tool calls off");
  const c = req.tool_choice;
  if (c === "none") {
    if (hasToolBlocks(messages)) throw new UnsupportedRequest("tool_choice", 'Converse cannot forbid tool calls ("none") in a conversation that holds tool calls');
    return undefined;
  }
  const tools = req.tools.map((t) => ({
    toolSpec: {
      name: t.function.name,
      ...(t.function.description ? { description: t.function.description } : {}),
      inputSchema: { json: t.function.parameters ?? { type: "object", properties: {} } },
    },
  }));
  const choice = c === undefined || c === "auto" ? undefined : c === "required" ? { any: {} } : { tool: { name: c.function.name } };
  return { tools, ...(choice ? { toolChoice: choice } : {}) };
}

/**
 * Refuses what Converse has no field for. The catalog's `supported_parameters` drop these hints
 * before the adapter sees them for endpoints that do not list them; one that arrives anyway (a
 * catalog that does not know) must not be silently lost.
 */
function refuseInexpressible(req: ChatRequest): void {
  const fields = ["top_k", "seed", "frequency_penalty", "presence_penalty"] as const;
  for (const field of fields) if (req[field] !== undefined) throw new UnsupportedRequest(field, "Converse has no such setting for this model");
  // Reasoning is on whenever it is given and not turned off (as `thinkingBudget` reads it).
  if (req.reasoning && req.reasoning.enabled !== false) {
    throw new UnsupportedRequest("reasoning", "reasoning settings are not sent through Converse");
  }
}

const isLlama = (model: string): boolean => /^(?:[a-z]{2,4}\.)?meta\.llama/.test(model);

/**
 * What Converse refuses of Meta's Llama models (its table of model features): stop sequences, a
 * forced tool, and tool use in a stream. Refused here, the cascade tries the next endpoint.
 */
function refuseForLlama(req: ChatRequest, stream: boolean): void {
  if (stopList(req)) throw new UnsupportedRequest("stop", "Bedrock takes no stop sequences for Meta Llama models");
  if (!req.tools?.length) return;
  if (stream) throw new UnsupportedRequest("tools", "Bedrock streams no tool calls from Meta Llama models");
  if (req.tool_choice === "required" || typeof req.tool_choice === "object") throw new UnsupportedRequest("tool_choice", "Bedrock lets Meta Llama models choose their tools (auto) only");
}

/** The Converse (or ConverseStream) request for a chat request (pure). */
export function buildConverseRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  refuseInexpressible(req);
  if (isLlama(target.upstreamModel)) refuseForLlama(req, stream);
  const messages = converseMessages(req.messages, target.providerSlug);
  const body: Record<string, unknown> = { messages };
  const system = systemBlocks(req);
  if (system.length) body.system = system;

  const inference: Record<string, unknown> = {};
  const requested = requestedMaxTokens(req);
  if (requested !== undefined) inference.maxTokens = target.maxOutputTokens > 0 ? Math.min(requested, target.maxOutputTokens) : requested;
  // Bedrock's models take a temperature of 0..1 where OpenAI's range is 0..2.
  if (req.temperature !== undefined) inference.temperature = Math.min(1, req.temperature);
  if (req.top_p !== undefined) inference.topP = req.top_p;
  const stops = stopList(req);
  if (stops) inference.stopSequences = stops;
  if (Object.keys(inference).length) body.inferenceConfig = inference;

  const tools = toolConfig(req, messages);
  if (tools) body.toolConfig = tools;

  return {
    url: bedrockModelUrl(target, stream ? "converse-stream" : "converse"),
    headers: { "content-type": "application/json", accept: stream ? "application/vnd.amazon.eventstream" : "application/json" },
    body: JSON.stringify(body),
  };
}
