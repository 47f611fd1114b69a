import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  EchoedReasoningDetail,
  FilePart,
  ReasoningEncryptedDetail,
  ReasoningTextDetail,
} from "@router/chat-request";
import {
  jsonInstruction,
  parseDataUrl,
  parseImageUrl,
  REASONING_FLOOR,
  requestedMaxTokens,
  stopList,
  systemPrompt,
  textOf,
  thinkingBudget,
  toolArgumentsObject,
  unreadablePart,
} from "../message-content";
import type { UpstreamHttpRequest, UpstreamTarget } from "../types";
import { ANTHROPIC_REASONING_FORMAT } from "./response";

export const ANTHROPIC_VERSION = "2023-06-01";
/** Used when neither the request nor the catalog gives a completion budget (Messages requires one). */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
interface WireMessage {
  role: "user" | "assistant";
  content: Block[];
}

function imageBlock(url: string): Block {
  const img = parseImageUrl(url);
  return img.base64
    ? { type: "image", source: { type: "base64", media_type: img.base64.mediaType, data: img.base64.data } }
    : { type: "image", source: { type: "url", url: img.url } };
}

/**
 * A `file` part as Anthropic reads it: a PDF as a `document` block, plain text as a text document,
 * an image as an image block. Other media types and Files API ids (OpenAI's, not Anthropic's) are
 * unreadable here.
 */
function fileBlock(p: FilePart, field: string, provider: string): Block {
  const data = p.file.file_data === undefined ? null : parseDataUrl(p.file.file_data);
  const title = p.file.filename ? { title: p.file.filename } : {};
  if (data?.mediaType === "application/pdf") return { type: "document", source: { type: "base64", media_type: "application/pdf", data: data.data }, ...title };
  if (data?.mediaType === "text/plain") {
    return { type: "document", source: { type: "text", media_type: "text/plain", data: Buffer.from(data.data, "base64").toString("utf8") }, ...title };
  }
  if (data?.mediaType.startsWith("image/")) return { type: "image", source: { type: "base64", media_type: data.mediaType, data: data.data } };
  throw unreadablePart(field, provider, data ? `a file of type ${data.mediaType}` : "a file by file_id");
}

function userBlocks(content: string | ContentPart[], field: string, provider: string): Block[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.map((p, j) => {
    switch (p.type) {
      case "text":
        return textBlock(p);
      case "image_url":
        return imageBlock(p.image_url.url);
      case "file":
        return fileBlock(p, `${field}.${j}`, provider);
      case "input_audio":
        throw unreadablePart(`${field}.${j}`, provider, "audio");
    }
  });
}

/** A text part as a block, with its prompt-cache breakpoint when it has one. */
function textBlock(p: Extract<ContentPart, { type: "text" }>): Block {
  return p.cache_control ? { type: "text", text: p.text, cache_control: p.cache_control } : { type: "text", text: p.text };
}

/**
 * The system prompt: a string, or text blocks when a system part carries a cache breakpoint (a
 * cached system prompt is the prefix an agent's every turn repeats).
 */
function systemOf(req: ChatRequest): string | Block[] {
  const instruction = jsonInstruction(req);
  const marked = req.messages.some((m) => (m.role === "system" || m.role === "developer") && Array.isArray(m.content) && m.content.some((p) => p.type === "text" && p.cache_control));
  if (!marked) return [systemPrompt(req), instruction].filter((s) => s).join("\n\n");
  const blocks: Block[] = [];
  for (const m of req.messages) {
    if (m.role !== "system" && m.role !== "developer") continue;
    if (typeof m.content === "string") blocks.push({ type: "text", text: m.content });
    else for (const p of m.content) if (p.type === "text") blocks.push(textBlock(p));
  }
  if (instruction) blocks.push({ type: "text", text: instruction });
  return blocks;
}

// The request schema has checked the shape of every detail of these kinds.
const isReasoningText = (d: EchoedReasoningDetail): d is ReasoningTextDetail => d.type === "reasoning.text";
const isReasoningEncrypted = (d: EchoedReasoningDetail): d is ReasoningEncryptedDetail => d.type === "reasoning.encrypted";

/**
 * The thinking and redacted_thinking blocks an assistant message echoes in `reasoning_details`, in
 * order. A streamed block arrives as pieces sharing an `index`, its signature last; pieces are joined.
 * Thinking without a signature cannot be sent (Anthropic verifies every block), so it is left out.
 */
function thinkingBlocks(details: EchoedReasoningDetail[] | undefined): Block[] {
  const blocks: Block[] = [];
  let unsigned: { index: number | undefined; text: string } | null = null;
  for (const d of details ?? []) {
    if (d.format !== ANTHROPIC_REASONING_FORMAT) continue;
    if (isReasoningEncrypted(d)) {
      unsigned = null;
      blocks.push({ type: "redacted_thinking", data: d.data });
    } else if (isReasoningText(d)) {
      if (unsigned && unsigned.index !== d.index) unsigned = null;
      unsigned ??= { index: d.index, text: "" };
      unsigned.text += d.text;
      if (d.signature) {
        blocks.push({ type: "thinking", thinking: unsigned.text, signature: d.signature });
        unsigned = null;
      }
    }
  }
  return blocks;
}

const isThinkingBlock = (b: Block | undefined) => b?.type === "thinking" || b?.type === "redacted_thinking";

/**
 * With thinking on, Anthropic wants the last assistant turn, when it calls a tool, to start with the
 * thinking that led to the call, exactly as it was returned; without it the request is refused.
 */
function lastToolTurnLacksThinking(messages: WireMessage[]): boolean {
  const last = messages.filter((m) => m.role === "assistant").pop();
  return !!last && last.content.some((b) => b.type === "tool_use") && !isThinkingBlock(last.content[0]);
}

/**
 * OpenAI messages → Messages turns: system apart, tool results as user turns, same-role turns merged.
 * With `withThinking`, an assistant turn starts with the thinking blocks it echoes.
 */
function wireMessages(messages: ChatMessage[], withThinking: boolean, provider: string): WireMessage[] {
  const out: WireMessage[] = [];
  const push = (role: WireMessage["role"], blocks: Block[]) => {
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
        return push("user", userBlocks(m.content, `messages.${i}.content`, provider));
      case "assistant": {
        const blocks: Block[] = [];
        const text = textOf(m.content);
        if (text) blocks.push({ type: "text", text });
        m.tool_calls?.forEach((c, j) =>
          blocks.push({
            type: "tool_use",
            id: c.id,
            name: c.function.name,
            input: toolArgumentsObject(c.function.arguments, `messages.${i}.tool_calls.${j}.function.arguments`),
          }),
        );
        // Thinking alone is no turn: it only ever leads to text or a tool call.
        if (withThinking && blocks.length) blocks.unshift(...thinkingBlocks(m.reasoning_details));
        return push("assistant", blocks);
      }
      case "tool": {
        // Text blocks keep a cache breakpoint an agent put on its last tool result.
        const marked = Array.isArray(m.content) && m.content.some((p) => p.cache_control);
        const content = marked && Array.isArray(m.content) ? m.content.map(textBlock) : textOf(m.content);
        return push("user", [{ type: "tool_result", tool_use_id: m.tool_call_id, content, ...(m.is_error ? { is_error: true } : {}) }]);
      }
    }
  });
  return out;
}

function toolChoice(req: ChatRequest): Block | undefined {
  const c = req.tool_choice;
  const parallel = req.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (c === undefined) return req.parallel_tool_calls === false ? { type: "auto", ...parallel } : undefined;
  if (c === "none") return { type: "none" };
  if (c === "auto") return { type: "auto", ...parallel };
  if (c === "required") return { type: "any", ...parallel };
  return { type: "tool", name: c.function.name, ...parallel };
}

interface ThinkingPlan {
  budget: number;
  maxTokens: number;
}

/**
 * The thinking budget and the max_tokens holding it, or null when the request does not think:
 * reasoning off, a forced tool (the API refuses both), or no room for the 1024 floor below the
 * endpoint's max output.
 */
function thinkingPlan(req: ChatRequest, target: UpstreamTarget, requested: number): ThinkingPlan | null {
  const forcesTool = !!req.tools?.length && (req.tool_choice === "required" || typeof req.tool_choice === "object");
  const wanted = forcesTool ? null : thinkingBudget(req, requested);
  if (wanted === null) return null;
  // The budget is part of max_tokens, so the answer keeps the room the caller asked for,
  // within what the endpoint can produce (a larger max_tokens is refused).
  const total = wanted >= requested ? wanted + requested : requested;
  const maxTokens = target.maxOutputTokens > 0 ? Math.min(total, target.maxOutputTokens) : total;
  // Anthropic wants budget_tokens < max_tokens.
  const budget = Math.min(wanted, maxTokens - 1);
  return budget >= REASONING_FLOOR ? { budget, maxTokens } : null;
}

/** The Messages request for a chat request (pure). */
export function buildAnthropicRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  const requested = requestedMaxTokens(req) ?? (target.maxOutputTokens > 0 ? target.maxOutputTokens : DEFAULT_MAX_TOKENS);
  let thinking = thinkingPlan(req, target, requested);
  let messages = wireMessages(req.messages, thinking !== null, target.providerSlug);
  if (thinking && lastToolTurnLacksThinking(messages)) {
    // Answering without thinking beats a certain 400 (e.g. history from another provider).
    thinking = null;
    messages = wireMessages(req.messages, false, target.providerSlug);
  }
  const body: Record<string, unknown> = { model: target.upstreamModel, max_tokens: requested, messages };

  const system = systemOf(req);
  if (system.length) body.system = system;
  if (stream) body.stream = true;
  // Anthropic's temperature range is 0..1 where OpenAI's is 0..2.
  if (req.temperature !== undefined) body.temperature = Math.min(1, req.temperature);
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) body.top_k = req.top_k;
  const stops = stopList(req);
  if (stops) body.stop_sequences = stops;
  if (req.user !== undefined) body.metadata = { user_id: req.user };

  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({
      name: t.function.name,
      ...(t.function.description ? { description: t.function.description } : {}),
      input_schema: t.function.parameters ?? { type: "object", properties: {} },
    }));
    const choice = toolChoice(req);
    if (choice) body.tool_choice = choice;
  }

  if (thinking) {
    body.thinking = { type: "enabled", budget_tokens: thinking.budget };
    body.max_tokens = thinking.maxTokens;
    delete body.temperature;
    delete body.top_p;
    delete body.top_k;
  }

  return { url: messagesUrl(target), headers: anthropicHeaders(target, stream), body: JSON.stringify(body) };
}

/** The headers of every Messages call: the key, the API version, and the client's beta flags. */
export function anthropicHeaders(target: UpstreamTarget, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    "x-api-key": target.apiKey,
    "anthropic-version": ANTHROPIC_VERSION,
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  if (target.vendorBeta) headers["anthropic-beta"] = target.vendorBeta;
  return headers;
}

/** `<base>/v1/messages`, or `<base>/messages` when the base already ends in its version; `path` goes after it. */
export function messagesUrl(target: UpstreamTarget, path = ""): URL {
  const base = target.baseUrl.replace(/\/+$/, "");
  return new URL(/\/v\d+$/.test(base) ? `${base}/messages${path}` : `${base}/v1/messages${path}`);
}
