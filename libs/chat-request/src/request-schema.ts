import { z } from "zod";
import { invalid } from "@router/errors";
import { MAX_JSON_DEPTH, parseInput, tooDeepPath } from "@router/http-kit";
import { providerPreferencesSchema, reasoningSchema, ROUTING_STABILITIES, samplingSettings, tokenCount } from "@router/request-settings";

/**
 * The body of `POST /v1/chat/completions` (the OpenAI-compatible chat format plus the router's
 * routing fields). Unknown top-level fields are dropped, since SDKs send fields of their own; a
 * known field with a wrong type or an unknown enum value is a 400 naming the field.
 */

const text = z.string();

/**
 * A prompt-cache breakpoint on a content part (Anthropic's, as OpenRouter takes it on this format):
 * sent on to providers that cache by markers (Anthropic), left out for the others.
 */
const cacheControl = z.object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() });
const textPart = z.object({ type: z.literal("text"), text, cache_control: cacheControl.optional() });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({
    url: z
      .string()
      .refine((u) => /^https?:\/\//i.test(u) || /^data:image\/[a-z0-9.+-]+;base64,/i.test(u), {
        message: "expected an http(s) URL or a base64 data URL of an image",
      }),
    detail: z.enum(["auto", "low", "high"]).optional(),
  }),
});
/**
 * A file inline as a base64 data URL (a PDF, as OpenAI takes it), or an id of OpenAI's Files API:
 * the fields of the chat route's `file` part and of the Responses API's `input_file`.
 */
export const fileReferenceFields = {
  file_data: z
    .string()
    .regex(/^data:[a-z0-9.+-]+\/[a-z0-9.+-]+;base64,/i, { message: "expected a base64 data URL (data:application/pdf;base64,...)" })
    .optional(),
  file_id: z.string().min(1).optional(),
  filename: z.string().optional(),
};
export const namesAFile = [
  (f: { file_data?: string; file_id?: string }) => f.file_data !== undefined || f.file_id !== undefined,
  { message: "expected file_data or file_id" },
] as const;
const filePart = z.object({
  type: z.literal("file"),
  file: z.object(fileReferenceFields).refine(...namesAFile),
});
/** Audio inline, base64 (OpenAI's audio-input models). */
const audioPart = z.object({
  type: z.literal("input_audio"),
  // Not z.enum: a wrong enum value inside a union is reported as the whole content being wrong.
  input_audio: z.object({ data: z.string().min(1), format: z.string().refine((f) => f === "wav" || f === "mp3", { message: 'expected "wav" or "mp3"' }) }),
});
const contentPart = z.discriminatedUnion("type", [textPart, imagePart, filePart, audioPart], {
  error: 'expected a content part of type "text", "image_url", "file" or "input_audio"',
});

const textContent = z.union([text, z.array(textPart)], { error: "expected a string or an array of text parts" });
const userContent = z.union([text, z.array(contentPart)], {
  error: "expected a string or an array of content parts (text, image_url, file, input_audio)",
});

/**
 * A string that parses as JSON (tool-call arguments), nested no deeper than a body may be: providers
 * that take the arguments as an object get them inside their body. Shared by every ingress.
 */
export const jsonText = z.string().superRefine((a, ctx) => {
  let value: unknown;
  try {
    value = JSON.parse(a);
  } catch {
    ctx.addIssue({ code: "custom", message: "expected a JSON text" });
    return;
  }
  if (tooDeepPath(value)) ctx.addIssue({ code: "custom", message: `nested more than ${MAX_JSON_DEPTH} levels deep` });
});

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1),
    arguments: jsonText,
  }),
});

const name = z.string().min(1).max(64).optional();

/*
 * `reasoning_details`: reasoning blocks of an earlier answer, echoed back so a provider that signs
 * its reasoning (Anthropic's thinking signatures, encrypted blocks) can verify and continue it.
 * The known kinds are checked by shape; other kinds (newer or other formats) pass unread, and each
 * adapter uses only the entries of its own `format`.
 */
const detailPosition = {
  format: z.string().nullable().optional(),
  index: z.number().int().min(0).optional(),
  id: z.string().nullable().optional(),
};
const reasoningTextDetail = z.object({
  type: z.literal("reasoning.text"),
  text: z.string(),
  signature: z.string().nullable().optional(),
  ...detailPosition,
});
const reasoningEncryptedDetail = z.object({ type: z.literal("reasoning.encrypted"), data: z.string().min(1), ...detailPosition });
const reasoningSummaryDetail = z.object({ type: z.literal("reasoning.summary"), summary: z.string(), ...detailPosition });
const knownReasoningDetails = new Map<string, z.ZodType>([
  ["reasoning.text", reasoningTextDetail],
  ["reasoning.encrypted", reasoningEncryptedDetail],
  ["reasoning.summary", reasoningSummaryDetail],
]);
// Not a z.union: a union reports a wrong field (or none) for a known kind with a bad field.
const reasoningDetail = z.looseObject({ type: z.string() }).superRefine((detail, ctx) => {
  const issues = knownReasoningDetails.get(detail.type)?.safeParse(detail).error?.issues ?? [];
  for (const issue of issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
});

export const chatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: textContent, name }),
  z.object({ role: z.literal("developer"), content: textContent, name }),
  z.object({ role: z.literal("user"), content: userContent, name }),
  z.object({
    role: z.literal("assistant"),
    content: textContent.nullable().optional(),
    name,
    tool_calls: z.array(toolCall).optional(),
    // Reasoning text of an earlier turn may be echoed back by clients; it is never sent upstream.
    reasoning: z.string().nullable().optional(),
    reasoning_details: z.array(reasoningDetail).max(64).optional(),
  }),
  z.object({ role: z.literal("tool"), content: textContent, tool_call_id: z.string().min(1), name }),
]);

/** A tool's function name as every provider accepts it; shared by every ingress. */
export const functionName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, { message: "expected 1 to 64 letters, digits, _ or -" });

const toolSchema = z.object({
  type: z.literal("function"),
  function: z.object({
    name: functionName,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const toolChoiceSchema = z.union(
  [
    z.enum(["none", "auto", "required"]),
    z.object({ type: z.literal("function"), function: z.object({ name: functionName }) }),
  ],
  { error: 'expected "none", "auto", "required" or {"type":"function","function":{"name":...}}' },
);

const responseFormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string().min(1).max(64),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

export const chatBodySchema = z.object({
  model: z.string().min(1).max(256).optional(),
  models: z.array(z.string().min(1).max(256)).max(16).optional(),
  messages: z.array(chatMessageSchema).min(1).optional(),
  prompt: z.string().optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
  max_tokens: tokenCount.optional(),
  max_completion_tokens: tokenCount.optional(),
  temperature: samplingSettings.temperature,
  top_p: samplingSettings.top_p,
  top_k: samplingSettings.top_k,
  frequency_penalty: z.number().min(-2).max(2).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(16)], { error: "expected a string or an array of at most 16 strings" })
    .nullable()
    .optional(),
  seed: samplingSettings.seed,
  tools: z.array(toolSchema).max(128).optional(),
  tool_choice: toolChoiceSchema.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: responseFormatSchema.optional(),
  reasoning: reasoningSchema.optional(),
  user: z.string().max(256).optional(),
  n: z.literal(1, { message: "only 1 choice per request is supported" }).optional(),
  provider: providerPreferencesSchema.optional(),
  session_id: z.string().min(1).max(256).optional(),
  prompt_cache_key: z.string().min(1).max(256).optional(),
  routing_stability: z.enum(ROUTING_STABILITIES).optional(),
  // Seeds routing's weighted draw, so an order can be replayed (not the sampling `seed`).
  routing_seed: z.string().min(1).max(128).optional(),
  // The run this completion is a turn of (`POST /v1/runs` answers the id); its limits are checked at admission.
  run_id: z.string().regex(/^run_[0-9A-Za-z]{1,64}$/, "expected a run id (run_...)").optional(),
  usage: z.object({ include: z.boolean().optional() }).optional(),
});

export type ChatBody = z.infer<typeof chatBodySchema>;
/** A message as a client sends it on the chat route. */
type ClientChatMessage = z.infer<typeof chatMessageSchema>;
/**
 * A tool message of the internal request. `is_error` says the tool failed: Anthropic Messages'
 * `tool_result.is_error` (`POST /v1/messages`) sets it. The chat route does not take it (the OpenAI
 * format has no such field, and the schema drops it), so it is the internal request's own.
 */
type ToolMessage = Extract<ClientChatMessage, { role: "tool" }> & { is_error?: boolean };
/** A message of the internal request: a client's, with what only other ingresses set. */
export type ChatMessage = Exclude<ClientChatMessage, { role: "tool" }> | ToolMessage;
export type ChatTool = z.infer<typeof toolSchema>;
export type ToolChoice = z.infer<typeof toolChoiceSchema>;
export type ContentPart = z.infer<typeof contentPart>;
export type FilePart = z.infer<typeof filePart>;
export type AudioPart = z.infer<typeof audioPart>;
export type ReasoningTextDetail = z.infer<typeof reasoningTextDetail>;
export type ReasoningEncryptedDetail = z.infer<typeof reasoningEncryptedDetail>;
/** A reasoning detail of a known kind, as providers' answers carry them. */
export type ReasoningDetail = ReasoningTextDetail | ReasoningEncryptedDetail | z.infer<typeof reasoningSummaryDetail>;
/** A reasoning detail as a client may echo it: a known kind (validated) or another kind, unread. */
export type EchoedReasoningDetail = z.infer<typeof reasoningDetail>;

/** A validated chat request: the legacy `prompt` has become one user message. */
export interface ChatRequest extends Omit<ChatBody, "messages" | "prompt"> {
  messages: ChatMessage[];
}

/** Validates a chat body (400 naming the field) and turns a legacy `prompt` into one user message. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalid("body", "expected a JSON object");
  }
  const { prompt, messages, ...rest } = parseInput(chatBodySchema, body);
  if (messages) return { ...rest, messages };
  if (prompt !== undefined) return { ...rest, messages: [{ role: "user", content: prompt }] };
  throw invalid("messages", "required (or the legacy prompt)");
}
