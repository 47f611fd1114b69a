import { z } from "zod";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { samplingSettings, tokenCount } from "@router/request-settings";
import type { ChatMessage, ChatRequest, ContentPart, ReasoningDetail } from "@router/chat-request";
import { fileReferenceFields, functionName, jsonText, namesAFile } from "@router/chat-request";
import type { ParsedRequest } from "../parsed";
import { routerFields, routerFieldValues } from "../router-fields";
import { reasoningDetailOf } from "./encrypted-reasoning";
import { inputItemsOf } from "./input-items";
import type { ClientToolNames } from "../client-tool-names";
import {
  chatToolChoice,
  customToolArguments,
  providerToolName,
  responsesTool,
  responsesToolChoice,
  translateTools,
} from "./tools";

/**
 * The body of `POST /v1/responses` (OpenAI Responses), validated and mapped to the internal chat
 * request. `previous_response_id` and `item_reference` items arrive already expanded from the
 * organisation's stored responses (stored-input.ts); `conversation` and `background` are a 400
 * naming the field. Unknown top-level fields are dropped, as on the chat route.
 */


const inputText = z.object({ type: z.literal("input_text"), text: z.string() });
const inputImage = z.object({
  type: z.literal("input_image"),
  image_url: z
    .string()
    .refine((u) => /^https?:\/\//i.test(u) || /^data:image\/[a-z0-9.+-]+;base64,/i.test(u), {
      message: "expected an http(s) URL or a base64 data URL of an image",
    }),
  detail: z.enum(["auto", "low", "high"]).optional(),
});
const outputText = z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()).optional() });
const refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });

/** A file inline (a base64 data URL, e.g. a PDF, as the AI SDK sends one) or by OpenAI file id: the chat route's `file` part. */
const inputFile = z.object({ type: z.literal("input_file"), ...fileReferenceFields }).refine(...namesAFile);
const inputAudio = z.object({
  type: z.literal("input_audio"),
  input_audio: z.object({ data: z.string().min(1), format: z.string().refine((f) => f === "wav" || f === "mp3", { message: 'expected "wav" or "mp3"' }) }),
});

const inputPart = z.discriminatedUnion("type", [inputText, inputImage, inputFile, inputAudio], {
  error: 'expected a content part of type "input_text", "input_image", "input_file" or "input_audio"',
});
const assistantPart = z.discriminatedUnion("type", [outputText, refusal], {
  error: 'expected a content part of type "output_text" or "refusal"',
});

const message = (role: "user" | "system" | "developer") =>
  z.object({
    type: z.literal("message").optional(),
    role: z.literal(role),
    content: z.union([z.string(), z.array(inputPart)], { error: "expected a string or an array of input parts" }),
  });

const assistantMessage = z.object({
  type: z.literal("message").optional(),
  role: z.literal("assistant"),
  id: z.string().optional(),
  status: z.string().optional(),
  content: z.union([z.string(), z.array(assistantPart)], { error: "expected a string or an array of output parts" }),
});

const messageItem = z.discriminatedUnion("role", [message("user"), message("system"), message("developer"), assistantMessage], {
  error: 'expected role "user", "assistant", "system" or "developer"',
});

const functionCallItem = z.object({
  type: z.literal("function_call"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: functionName,
  /** The group of a function of a `namespace` tool (tools.ts). */
  namespace: z.string().min(1).max(128).optional(),
  arguments: jsonText,
  status: z.string().optional(),
});
/** A call of a `custom` (freeform) tool and its output: a function call with one string argument upstream (tools.ts). */
const customToolCallItem = z.object({
  type: z.literal("custom_tool_call"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: functionName,
  input: z.string(),
  status: z.string().optional(),
});
const customToolCallOutputItem = z.object({
  type: z.literal("custom_tool_call_output"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(inputText)], { error: "expected a string or an array of input_text parts" }),
});
const functionCallOutputItem = z.object({
  type: z.literal("function_call_output"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(inputText)], { error: "expected a string or an array of input_text parts" }),
  status: z.string().optional(),
});
/*
 * A reasoning item of an earlier answer, echoed back. Its `encrypted_content` (encrypted-reasoning.ts)
 * holds the signed reasoning a provider needs to continue the turn: Anthropic refuses a thinking
 * request whose tool-calling assistant turn lacks the thinking it returned. It goes on as
 * `reasoning_details` of the assistant turn that the items after it make. An item without it
 * carries nothing to continue and is dropped.
 */
const reasoningItem = z.looseObject({
  type: z.literal("reasoning"),
  encrypted_content: z
    .string()
    .refine((e) => reasoningDetailOf(e) !== null, { message: "expected the encrypted_content of a reasoning item Router returned, unchanged" })
    .nullable()
    .optional(),
});

/** One input item; checked by `type` (a message may omit it), so the error names the right field. */
const inputItem = z.unknown().superRefine((item, ctx) => {
  const type = item !== null && typeof item === "object" ? (item as { type?: unknown }).type : undefined;
  const schema =
    type === undefined || type === "message"
      ? messageItem
      : type === "function_call"
        ? functionCallItem
        : type === "function_call_output"
          ? functionCallOutputItem
          : type === "reasoning"
            ? reasoningItem
            : type === "custom_tool_call"
              ? customToolCallItem
              : type === "custom_tool_call_output"
                ? customToolCallOutputItem
                : null;
  if (!schema) {
    ctx.addIssue({
      code: "custom",
      // References are replaced by their stored items before parsing (stored-input.ts): one left here was never found.
      path: type === "item_reference" ? ["id"] : ["type"],
      message:
        type === "item_reference"
          ? "no stored item has this id"
          : 'expected an item of type "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output" or "reasoning"',
    });
    return;
  }
  for (const issue of schema.safeParse(item).error?.issues ?? []) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
});

const formatSchema = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({
      type: z.literal("json_schema"),
      name: z.string().min(1).max(64),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()),
      strict: z.boolean().nullable().optional(),
    }),
  ],
  { error: 'expected a format of type "text", "json_object" or "json_schema"' },
);

const stateless = (what: string) =>
  z
    .unknown()
    .refine((v) => v === undefined || v === null, { message: `Router keeps no conversations: ${what}` })
    .optional();

export const responsesBodySchema = z.object({
  model: z.string().min(1).max(256).optional(),
  input: z.union([z.string(), z.array(inputItem).min(1)], { error: "expected a string or an array of input items" }),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().optional(),
  max_output_tokens: tokenCount.nullable().optional(),
  temperature: samplingSettings.temperature.nullable(),
  top_p: samplingSettings.top_p.nullable(),
  tools: z.array(responsesTool).max(128).optional(),
  tool_choice: responsesToolChoice.optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  reasoning: z
    .object({
      effort: z.enum(["none", "minimal", "low", "medium", "high"]).nullable().optional(),
      summary: z.string().nullable().optional(),
    })
    .nullable()
    .optional(),
  text: z.object({ format: formatSchema.optional(), verbosity: z.string().nullable().optional() }).nullable().optional(),
  store: z.boolean().nullable().optional(),
  metadata: z.record(z.string(), z.string().max(512)).nullable().optional(),
  user: z.string().max(256).optional(),
  previous_response_id: z.string().min(1).max(256).nullable().optional(),
  conversation: stateless("send the whole conversation in input instead of a conversation"),
  background: z.literal(false, { message: "Router does not run responses in the background" }).nullable().optional(),
  ...routerFields,
});

export type ResponsesBody = z.infer<typeof responsesBodySchema>;
type MessageItem = z.infer<typeof messageItem>;

/** Validates a Responses body (400 naming the field) and maps it to the internal chat request. */
export function parseResponsesRequest(body: unknown): ParsedRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  const b = parseInput(responsesBodySchema, body);
  const tools = translateTools(b.tools ?? []);
  const messages: ChatMessage[] = [];
  if (b.instructions) messages.push({ role: "system", content: b.instructions });
  if (typeof b.input === "string") messages.push({ role: "user", content: b.input });
  else addItems(messages, b.input as InputItem[], tools.names);
  if (!messages.some((m) => m.role !== "system")) throw invalid("input", "expected at least one message or function call output");
  const request: ChatRequest = {
    model: b.model,
    messages,
    stream: b.stream,
    max_tokens: b.max_output_tokens ?? undefined,
    temperature: b.temperature ?? undefined,
    top_p: b.top_p ?? undefined,
    user: b.user,
    ...routerFieldValues(b),
  };
  if (tools.tools.length) request.tools = tools.tools;
  // Only built-in tools (all dropped upstream, unless an endpoint runs them): a choice among them asks for nothing more.
  if (b.tool_choice && (tools.tools.length || typeof b.tool_choice !== "string")) request.tool_choice = chatToolChoice(b.tool_choice, tools.names);
  if (b.parallel_tool_calls != null && tools.tools.length) request.parallel_tool_calls = b.parallel_tool_calls;
  const effort = b.reasoning?.effort;
  if (effort === "none") request.reasoning = { enabled: false };
  else if (effort) request.reasoning = { effort: effort === "minimal" ? "low" : effort };
  const format = b.text?.format;
  if (format?.type === "json_schema") {
    request.response_format = {
      type: "json_schema",
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description !== undefined ? { description: format.description } : {}),
        ...(format.strict != null ? { strict: format.strict } : {}),
      },
    };
  } else if (format) request.response_format = { type: format.type };
  for (const k of Object.keys(request) as (keyof ChatRequest)[]) if (request[k] === undefined) delete request[k];
  return { request, echo: echoOf(b), builtinTools: tools.builtin, toolNames: tools.names, storedInput: b.store === true ? inputItemsOf(b.input) : undefined };
}

/** What a Responses answer repeats of its request (settings, not input). */
function echoOf(b: ResponsesBody): Record<string, unknown> {
  return {
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    temperature: b.temperature ?? null,
    top_p: b.top_p ?? null,
    tools: b.tools ?? [],
    tool_choice: b.tool_choice ?? "auto",
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    reasoning: { effort: b.reasoning?.effort ?? null, summary: null },
    text: { format: b.text?.format ?? { type: "text" } },
    metadata: b.metadata ?? {},
    user: b.user ?? null,
    // Decided before parsing (stored-input.ts): true only when the answer is kept.
    store: b.store === true,
    previous_response_id: b.previous_response_id ?? null,
    truncation: "disabled",
  };
}

type NonReasoningItem =
  | MessageItem
  | z.infer<typeof functionCallItem>
  | z.infer<typeof functionCallOutputItem>
  | z.infer<typeof customToolCallItem>
  | z.infer<typeof customToolCallOutputItem>;
type InputItem = NonReasoningItem | z.infer<typeof reasoningItem>;

type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

/**
 * Appends the items. Reasoning items wait for the assistant turn that the next items make (an
 * assistant message or function calls, as a response's output orders them) and go on as its
 * `reasoning_details`; reasoning that no assistant item follows has nothing to continue and is dropped.
 */
function addItems(messages: ChatMessage[], items: InputItem[], names: ClientToolNames): void {
  let reasoning: ReasoningDetail[] = [];
  for (const item of items) {
    if (item.type === "reasoning") {
      const detail = item.encrypted_content ? reasoningDetailOf(item.encrypted_content) : null;
      if (detail) reasoning.push(detail);
      continue;
    }
    const turn = addItem(messages, item, names);
    if (turn && reasoning.length) {
      const details = (turn.reasoning_details ??= []);
      for (const d of reasoning) details.push({ ...d, index: details.length });
    }
    reasoning = [];
  }
}

/**
 * Appends one item; consecutive function calls join the assistant turn before them, as chat carries
 * them. Answers the assistant message the item made or joined, if any.
 */
function addItem(messages: ChatMessage[], item: NonReasoningItem, names: ClientToolNames): AssistantMessage | null {
  if (item.type === "function_call" || item.type === "custom_tool_call") {
    const fn =
      item.type === "function_call"
        ? { name: providerToolName(names, item.name, item.namespace), arguments: item.arguments }
        : { name: item.name, arguments: customToolArguments(item.input) };
    const call = { id: item.call_id, type: "function" as const, function: fn };
    const last = messages[messages.length - 1];
    if (last?.role === "assistant") {
      (last.tool_calls ??= []).push(call);
      return last;
    }
    const turn: AssistantMessage = { role: "assistant", content: null, tool_calls: [call] };
    messages.push(turn);
    return turn;
  }
  if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
    const content = typeof item.output === "string" ? item.output : item.output.map((p) => p.text).join("");
    messages.push({ role: "tool", tool_call_id: item.call_id, content });
    return null;
  }
  if (item.role === "assistant") {
    const content = typeof item.content === "string" ? item.content : item.content.map((p) => (p.type === "output_text" ? p.text : p.refusal)).join("");
    const turn: AssistantMessage = { role: "assistant", content };
    messages.push(turn);
    return turn;
  }
  const content = typeof item.content === "string" ? item.content : item.content.map(partOf);
  if (item.role === "user") {
    messages.push({ role: "user", content });
    return null;
  }
  const text = typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");
  messages.push({ role: item.role, content: text });
  return null;
}

function partOf(p: z.infer<typeof inputPart>): ContentPart {
  switch (p.type) {
    case "input_text":
      return { type: "text", text: p.text };
    case "input_image":
      return { type: "image_url", image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } };
    case "input_file": {
      const { type: _type, ...file } = p;
      return { type: "file", file };
    }
    case "input_audio":
      return { type: "input_audio", input_audio: p.input_audio };
  }
}
