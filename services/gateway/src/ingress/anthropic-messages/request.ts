import { z } from "zod";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { samplingSettings, tokenCount } from "@router/request-settings";
import type { ChatMessage, ChatRequest, ContentPart, ReasoningDetail } from "../../chat/request-schema";
import { functionName } from "../../chat/request-schema";
import { ANTHROPIC_REASONING_FORMAT } from "../../providers/anthropic/response";
import { routerFields, routerFieldValues } from "../router-fields";

/**
 * The body of `POST /v1/messages` (Anthropic Messages), validated and mapped to the internal chat
 * request. Unknown top-level fields are dropped, as on the chat route; a known field with a wrong
 * type is a 400 naming it.
 */

const extras = { cache_control: z.unknown().optional(), citations: z.unknown().optional() };

const textBlock = z.object({ type: z.literal("text"), text: z.string(), ...extras });
const imageBlock = z.object({
  type: z.literal("image"),
  source: z.discriminatedUnion(
    "type",
    [
      z.object({ type: z.literal("base64"), media_type: z.string().regex(/^image\/[a-z0-9.+-]+$/i, { message: "expected an image media type" }), data: z.string().min(1) }),
      z.object({ type: z.literal("url"), url: z.string().regex(/^https?:\/\//i, { message: "expected an http(s) URL" }) }),
    ],
    { error: 'expected an image source of type "base64" or "url"' },
  ),
  ...extras,
});
const toolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: functionName,
  input: z.record(z.string(), z.unknown()),
  ...extras,
});
const toolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(textBlock)], { error: "expected a string or an array of text blocks" }).optional(),
  is_error: z.boolean().optional(),
  ...extras,
});
const thinkingBlock = z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.object({ type: z.literal("redacted_thinking"), data: z.string().min(1) });

const userBlock = z.discriminatedUnion("type", [textBlock, imageBlock, toolResultBlock], {
  error: 'expected a user content block of type "text", "image" or "tool_result"',
});
const assistantBlock = z.discriminatedUnion("type", [textBlock, toolUseBlock, thinkingBlock, redactedThinkingBlock], {
  error: 'expected an assistant content block of type "text", "tool_use", "thinking" or "redacted_thinking"',
});

const messageSchema = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(userBlock)], { error: "expected a string or an array of content blocks" }) }),
    z.object({
      role: z.literal("assistant"),
      content: z.union([z.string(), z.array(assistantBlock)], { error: "expected a string or an array of content blocks" }),
    }),
  ],
  { error: 'expected role "user" or "assistant"' },
);

const toolSchema = z.object({
  // Server tools (web search, code execution, ...) run at Anthropic; only client tools route anywhere.
  type: z.literal("custom", { message: 'only client tools (type "custom" or none) are supported' }).optional(),
  name: functionName,
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  ...extras,
});

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const toolChoiceSchema = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("auto"), ...parallel }),
    z.object({ type: z.literal("any"), ...parallel }),
    z.object({ type: z.literal("tool"), name: functionName, ...parallel }),
    z.object({ type: z.literal("none") }),
  ],
  { error: 'expected a tool choice of type "auto", "any", "tool" or "none"' },
);

const thinkingSchema = z.discriminatedUnion(
  "type",
  [z.object({ type: z.literal("enabled"), budget_tokens: z.number().int().min(1024) }), z.object({ type: z.literal("disabled") })],
  { error: 'expected thinking of type "enabled" (with budget_tokens) or "disabled"' },
);

export const messagesBodySchema = z.object({
  model: z.string().min(1).max(256).optional(),
  messages: z.array(messageSchema).min(1),
  system: z.union([z.string(), z.array(textBlock)], { error: "expected a string or an array of text blocks" }).optional(),
  max_tokens: tokenCount,
  stop_sequences: z.array(z.string()).max(16).optional(),
  temperature: samplingSettings.temperature,
  top_p: samplingSettings.top_p,
  top_k: samplingSettings.top_k,
  stream: z.boolean().optional(),
  tools: z.array(toolSchema).max(128).optional(),
  tool_choice: toolChoiceSchema.optional(),
  thinking: thinkingSchema.optional(),
  metadata: z.object({ user_id: z.string().max(256).nullable().optional() }).optional(),
  ...routerFields,
});

export type MessagesBody = z.infer<typeof messagesBodySchema>;
type UserBlock = z.infer<typeof userBlock>;
type AssistantBlock = z.infer<typeof assistantBlock>;

const joinText = (blocks: { text: string }[]): string => blocks.map((b) => b.text).join("");

/** Validates an Anthropic Messages body (400 naming the field) and maps it to the internal chat request. */
export function parseMessagesRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  const b = parseInput(messagesBodySchema, body);
  const messages: ChatMessage[] = [];
  if (b.system !== undefined) {
    const system = typeof b.system === "string" ? b.system : joinText(b.system);
    if (system !== "") messages.push({ role: "system", content: system });
  }
  for (const m of b.messages) {
    if (m.role === "user") messages.push(...userMessages(m.content));
    else messages.push(assistantMessage(m.content));
  }
  const request: ChatRequest = {
    model: b.model,
    messages,
    stream: b.stream,
    max_tokens: b.max_tokens,
    temperature: b.temperature,
    top_p: b.top_p,
    top_k: b.top_k,
    stop: b.stop_sequences,
    user: b.metadata?.user_id ?? undefined,
    ...routerFieldValues(b),
  };
  if (b.tools?.length) {
    request.tools = b.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  if (b.tool_choice) {
    const c = b.tool_choice;
    request.tool_choice = c.type === "auto" ? "auto" : c.type === "any" ? "required" : c.type === "none" ? "none" : { type: "function", function: { name: c.name } };
    if (c.type !== "none" && c.disable_parallel_tool_use) request.parallel_tool_calls = false;
  }
  if (b.thinking?.type === "enabled") request.reasoning = { max_tokens: b.thinking.budget_tokens };
  return dropUndefined(request);
}

/**
 * A user turn: its tool results become `tool` messages (first, as Anthropic orders them; a failed
 * tool's keeps `is_error`), the rest one user message.
 */
function userMessages(content: string | UserBlock[]): ChatMessage[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of content) {
    if (block.type === "tool_result") {
      const text = block.content === undefined ? "" : typeof block.content === "string" ? block.content : joinText(block.content);
      out.push({ role: "tool", tool_call_id: block.tool_use_id, content: text, ...(block.is_error ? { is_error: true } : {}) });
    } else if (block.type === "text") {
      parts.push({ type: "text", text: block.text });
    } else {
      const s = block.source;
      parts.push({ type: "image_url", image_url: { url: s.type === "url" ? s.url : `data:${s.media_type};base64,${s.data}` } });
    }
  }
  const texts = parts.filter((p) => p.type === "text");
  if (parts.length) out.push({ role: "user", content: texts.length === parts.length ? joinText(texts) : parts });
  return out;
}

/** An assistant turn: text, tool calls, and signed thinking kept as `reasoning_details` to echo to Anthropic. */
type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

function assistantMessage(content: string | AssistantBlock[]): AssistantMessage {
  if (typeof content === "string") return { role: "assistant", content };
  const text: string[] = [];
  const toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  const details: ReasoningDetail[] = [];
  for (const block of content) {
    if (block.type === "text") text.push(block.text);
    else if (block.type === "tool_use") toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input) } });
    else if (block.type === "thinking") {
      details.push({ type: "reasoning.text", text: block.thinking, signature: block.signature, format: ANTHROPIC_REASONING_FORMAT, index: details.length });
    } else details.push({ type: "reasoning.encrypted", data: block.data, format: ANTHROPIC_REASONING_FORMAT, index: details.length });
  }
  const message: AssistantMessage = { role: "assistant", content: text.length ? text.join("") : null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (details.length) message.reasoning_details = details;
  return message;
}

/** Leaves out absent fields, so the request reads as if the client had sent only what it sent. */
function dropUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}
