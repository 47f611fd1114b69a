import { z } from "zod";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { samplingSettings, tokenCount } from "@router/request-settings";
import type { ChatMessage, ChatRequest, ContentPart, ReasoningDetail } from "@router/chat-request";
import { functionName } from "@router/chat-request";
import { ANTHROPIC_REASONING_FORMAT } from "@router/providers";
import type { NativeBody } from "../parsed";
import { routerFields, routerFieldValues } from "../router-fields";

/**
 * The body of `POST /v1/messages` (Anthropic Messages), validated and mapped to the internal chat
 * request, and kept as the client wrote it for Anthropic endpoints (`NativeBody`).
 *
 * The blocks and fields Router maps are checked by shape (a 400 naming the nested field); block
 * types, tool types and fields it does not model pass unread, since Anthropic adds them often and
 * an agent sends them by default: an Anthropic endpoint gets them unchanged, other families go
 * without them. Unknown top-level fields are likewise kept for Anthropic only.
 */

const extras = { cache_control: z.unknown().optional(), citations: z.unknown().optional() };

/**
 * A content block: `type` picks the schema it must match; a type without one passes unread.
 * Not a z.discriminatedUnion: that refuses every type it does not list.
 */
function blockOf(kinds: Record<string, z.ZodType>, where: string) {
  return z.looseObject({ type: z.string({ error: `expected ${where} with a "type"` }) }).superRefine((block, ctx) => {
    const issues = kinds[block.type]?.safeParse(block).error?.issues ?? [];
    for (const issue of issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  });
}

const textBlock = z.object({ type: z.literal("text"), text: z.string(), ...extras });
const base64Source = (mediaType: RegExp, what: string) =>
  z.object({ type: z.literal("base64"), media_type: z.string().regex(mediaType, { message: `expected ${what} media type` }), data: z.string().min(1) });
const urlSource = z.object({ type: z.literal("url"), url: z.string().regex(/^https?:\/\//i, { message: "expected an http(s) URL" }) });
const imageBlock = z.object({
  type: z.literal("image"),
  // `file` (a Files API id) is Anthropic's own: it passes unread, as unknown source types do.
  source: blockOf({ base64: base64Source(/^image\/[a-z0-9.+-]+$/i, "an image"), url: urlSource }, "an image source"),
  ...extras,
});
const documentBlock = z.object({
  type: z.literal("document"),
  source: blockOf(
    {
      base64: base64Source(/^[a-z]+\/[a-z0-9.+-]+$/i, "a"),
      url: urlSource,
      text: z.object({ type: z.literal("text"), data: z.string() }),
      content: z.object({ type: z.literal("content"), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) }),
    },
    "a document source",
  ),
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  ...extras,
});
/** What a tool result may hold; text, images and documents are mapped for other families. */
const toolResultContent = blockOf({ text: textBlock, image: imageBlock, document: documentBlock }, "a tool result block");
const toolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(toolResultContent)], { error: "expected a string or an array of content blocks" }).optional(),
  is_error: z.boolean().optional(),
  ...extras,
});
const toolUseBlock = z.object({ type: z.literal("tool_use"), id: z.string().min(1), name: functionName, input: z.record(z.string(), z.unknown()), ...extras });
const thinkingBlock = z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.object({ type: z.literal("redacted_thinking"), data: z.string().min(1) });

const userBlock = blockOf({ text: textBlock, image: imageBlock, document: documentBlock, tool_result: toolResultBlock }, "a content block");
const assistantBlock = blockOf(
  { text: textBlock, tool_use: toolUseBlock, thinking: thinkingBlock, redacted_thinking: redactedThinkingBlock },
  "a content block",
);

const content = <T extends z.ZodType>(block: T) => z.union([z.string(), z.array(block)], { error: "expected a string or an array of content blocks" });

const messageSchema = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("user"), content: content(userBlock) }),
    z.object({ role: z.literal("assistant"), content: content(assistantBlock) }),
    // Not Anthropic's, but agents send it for models they do not know (Claude Code does).
    z.object({ role: z.literal("system"), content: content(textBlock) }),
  ],
  { error: 'expected role "user", "assistant" or "system"' },
);

/** A client tool; a tool with another `type` is one the provider defines (server tools, bash, ...). */
const clientTool = z.object({
  type: z.literal("custom").optional(),
  name: functionName,
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  ...extras,
});
const toolSchema = z
  .looseObject({ type: z.string().optional() })
  .superRefine((tool, ctx) => {
    if (tool.type !== undefined && tool.type !== "custom") return;
    for (const issue of clientTool.safeParse(tool).error?.issues ?? []) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
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

const thinkingSchema = blockOf(
  { enabled: z.object({ type: z.literal("enabled"), budget_tokens: z.number().int().min(1024) }) },
  'thinking ("enabled" with budget_tokens, "adaptive" or "disabled")',
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
  // Anthropic's effort ("low" to "max") for adaptive thinking; other families get it as reasoning effort.
  output_config: z.looseObject({ effort: z.string().optional() }).optional(),
  metadata: z.looseObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
  ...routerFields,
});

export type MessagesBody = z.infer<typeof messagesBodySchema>;
type UserBlock = z.infer<typeof userBlock>;
type AssistantBlock = z.infer<typeof assistantBlock>;
type TextBlock = z.infer<typeof textBlock>;
type ImageBlock = z.infer<typeof imageBlock>;
type DocumentBlock = z.infer<typeof documentBlock>;
type ToolResultBlock = z.infer<typeof toolResultBlock>;

// The schema has checked every block of these types against its own shape.
const isText = (b: { type: string }): b is TextBlock => b.type === "text";
const isImage = (b: { type: string }): b is ImageBlock => b.type === "image";
const isDocument = (b: { type: string }): b is DocumentBlock => b.type === "document";

const joinText = (blocks: { type: string }[]): string => blocks.filter(isText).map((b) => b.text).join("");

/** Body fields that are Router's: they never reach a provider. */
const ROUTER_FIELD_NAMES = Object.keys(routerFields);

/** The parsed request and the client's body for Anthropic endpoints. */
export interface ParsedMessages {
  request: ChatRequest;
  native: NativeBody;
  /** Tools the provider defines (server tools, Anthropic-schema tools): only Anthropic runs them. */
  providerTools: string[];
}

/** Validates an Anthropic Messages body (400 naming the field) and maps it to the internal chat request. */
export function parseMessagesRequest(body: unknown): ChatRequest {
  return parseMessages(body).request;
}

export function parseMessages(body: unknown): ParsedMessages {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  const b = parseInput(messagesBodySchema, body);
  const messages: ChatMessage[] = [];
  if (b.system !== undefined) {
    const system = typeof b.system === "string" ? b.system : joinText(b.system);
    if (system !== "") messages.push({ role: "system", content: system });
  }
  for (const m of b.messages) {
    if (m.role === "user") messages.push(...userMessages(m.content));
    else if (m.role === "assistant") messages.push(assistantMessage(m.content));
    else messages.push({ role: "system", content: typeof m.content === "string" ? m.content : joinText(m.content) });
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
  // A conversation stays on the endpoint that holds its prompt cache (sticky routing by session).
  request.session_id ??= sessionOf(b.metadata?.user_id);
  const providerTools: string[] = [];
  const clientTools: z.infer<typeof clientTool>[] = [];
  for (const t of b.tools ?? []) {
    if (t.type === undefined || t.type === "custom") clientTools.push(t as z.infer<typeof clientTool>);
    else providerTools.push(typeof t.name === "string" ? t.name : t.type);
  }
  if (clientTools.length) {
    request.tools = clientTools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  if (b.tool_choice && clientTools.length) {
    const c = b.tool_choice;
    request.tool_choice = c.type === "auto" ? "auto" : c.type === "any" ? "required" : c.type === "none" ? "none" : { type: "function", function: { name: c.name } };
    if (c.type !== "none" && c.disable_parallel_tool_use) request.parallel_tool_calls = false;
  }
  const reasoning = reasoningOf(b);
  if (reasoning) request.reasoning = reasoning;
  return { request: dropUndefined(request), native: { family: "anthropic", body: nativeBody(body as Record<string, unknown>) }, providerTools };
}

/**
 * The session an agent names in `metadata.user_id`: Claude Code sends a JSON text with its
 * `session_id`; other clients' user ids are not sessions and name none.
 */
function sessionOf(userId: string | null | undefined): string | undefined {
  if (!userId?.startsWith("{")) return undefined;
  try {
    const session = (JSON.parse(userId) as { session_id?: unknown }).session_id;
    return typeof session === "string" && session !== "" && session.length <= 256 ? session : undefined;
  } catch {
    return undefined;
  }
}

/** The client's body without Router's own fields; model and stream are set per endpoint. */
function nativeBody(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!ROUTER_FIELD_NAMES.includes(k)) out[k] = v;
  return out;
}

const EFFORTS = { low: "low", medium: "medium", high: "high", max: "high", xhigh: "high" } as const;

/**
 * Thinking for other families: a budget stays a budget; adaptive thinking (with `output_config.effort`,
 * Anthropic's default being high) becomes a reasoning effort.
 */
function reasoningOf(b: MessagesBody): ChatRequest["reasoning"] {
  const thinking = b.thinking as { type: string; budget_tokens?: number } | undefined;
  if (thinking?.type === "enabled" && thinking.budget_tokens !== undefined) return { max_tokens: thinking.budget_tokens };
  if (thinking?.type !== "adaptive") return undefined;
  const effort = b.output_config?.effort;
  return { effort: effort !== undefined && effort in EFFORTS ? EFFORTS[effort as keyof typeof EFFORTS] : "high" };
}

/**
 * A user turn: its tool results become `tool` messages (first, as Anthropic orders them; a failed
 * tool's keeps `is_error`), the rest one user message. What a tool result holds beside text (images,
 * documents) cannot be a tool message's content in the other families: it joins that user message.
 */
function userMessages(content: string | UserBlock[]): ChatMessage[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of content) {
    if (block.type === "tool_result") {
      const result = block as ToolResultBlock;
      const blocks = typeof result.content === "string" ? [{ type: "text", text: result.content }] : (result.content ?? []);
      out.push({ role: "tool", tool_call_id: result.tool_use_id, content: joinText(blocks), ...(result.is_error ? { is_error: true } : {}) });
      for (const inner of blocks) if (!isText(inner)) parts.push(...partsOf(inner));
    } else parts.push(...partsOf(block));
  }
  const texts = parts.filter((p) => p.type === "text");
  if (parts.length) out.push({ role: "user", content: texts.length === parts.length ? texts.map((p) => p.text).join("") : parts });
  return out;
}

/** A block as the internal request's content parts; a block no other family can read is left out. */
function partsOf(block: { type: string }): ContentPart[] {
  if (isText(block)) return [{ type: "text", text: block.text }];
  if (isImage(block)) {
    const s = block.source as { type: string; url?: string; media_type?: string; data?: string };
    if (s.type === "url" && s.url) return [{ type: "image_url", image_url: { url: s.url } }];
    if (s.type === "base64") return [{ type: "image_url", image_url: { url: `data:${s.media_type};base64,${s.data}` } }];
    return [];
  }
  if (isDocument(block)) return documentParts(block);
  return [];
}

/**
 * A document for other families: its text when it has one; a PDF or a URL is named in a line of
 * text, so the model knows something was there that it cannot read.
 */
function documentParts(doc: DocumentBlock): ContentPart[] {
  const s = doc.source as { type: string; data?: string; media_type?: string; url?: string; content?: string | { type: string }[] };
  const title = doc.title ? `${doc.title}\n` : "";
  if (s.type === "text" && s.data !== undefined) return [{ type: "text", text: `${title}${s.data}` }];
  if (s.type === "content") return [{ type: "text", text: `${title}${typeof s.content === "string" ? s.content : joinText(s.content ?? [])}` }];
  const what = s.type === "url" ? s.url : s.media_type;
  return [{ type: "text", text: `[${doc.title ?? "document"} (${what ?? s.type}): not readable by this model]` }];
}

/** An assistant turn: text, tool calls, and signed thinking kept as `reasoning_details` to echo to Anthropic. */
type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

function assistantMessage(content: string | AssistantBlock[]): AssistantMessage {
  if (typeof content === "string") return { role: "assistant", content };
  const text: string[] = [];
  const toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  const details: ReasoningDetail[] = [];
  for (const raw of content) {
    const block = raw as { type: string } & Record<string, unknown>;
    if (isText(block)) text.push(block.text);
    else if (block.type === "tool_use") {
      const use = block as z.infer<typeof toolUseBlock>;
      toolCalls.push({ id: use.id, type: "function", function: { name: use.name, arguments: JSON.stringify(use.input) } });
    } else if (block.type === "thinking") {
      const t = block as z.infer<typeof thinkingBlock>;
      details.push({ type: "reasoning.text", text: t.thinking, signature: t.signature, format: ANTHROPIC_REASONING_FORMAT, index: details.length });
    } else if (block.type === "redacted_thinking") {
      details.push({ type: "reasoning.encrypted", data: (block as z.infer<typeof redactedThinkingBlock>).data, format: ANTHROPIC_REASONING_FORMAT, index: details.length });
    }
    // Server tool calls and their results ran at Anthropic: other families cannot take them.
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
