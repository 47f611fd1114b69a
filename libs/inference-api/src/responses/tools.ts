import { createHash } from "node:crypto";
import { z } from "zod";
import type { ChatRequest } from "@router/chat-request";
import { functionName } from "@router/chat-request";
import type { ClientToolName, ClientToolNames } from "../client-tool-names";

/**
 * The `tools` of a Responses request as providers can take them. No endpoint speaks the Responses
 * API upstream, so every tool becomes a chat function tool or, when a provider would have to run
 * it, a built-in tool name:
 *
 * - `function`: as is.
 * - `namespace` (a named group of function tools, as Codex CLI sends its sub-agent tools): each
 *   function flattened to `<namespace>__<name>` (Codex's own flat form); a call comes back as a
 *   `function_call` item with `namespace` and the function's own `name`.
 * - `custom` (freeform text input, e.g. an `apply_patch` with a grammar): a function taking the
 *   text as one string argument `input`, the grammar in its description; a call comes back as a
 *   `custom_tool_call` item with that text as `input`.
 * - any other type (`web_search`, `file_search`, `code_interpreter`, `image_generation`,
 *   `computer_use_preview`, `mcp`, ...) is a built-in tool the provider runs: named in `builtin`,
 *   and dropped or refused by the pipeline for the endpoint that serves (chat/builtin-tools.ts).
 */

const description = z.string().nullable().optional();

const functionTool = z.object({
  type: z.literal("function"),
  name: functionName,
  description,
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const namespaceTool = z.object({
  type: z.literal("namespace"),
  name: z.string().min(1).max(128),
  description,
  tools: z.array(functionTool).min(1).max(128),
});

/** A grammar (`lark` or `regex`) or plain text; what else a format may carry is kept for the description. */
const customFormat = z.looseObject({
  type: z.string(),
  syntax: z.string().optional(),
  definition: z.string().optional(),
});

const customTool = z.object({
  type: z.literal("custom"),
  name: functionName,
  description,
  format: customFormat.nullable().optional(),
});

const builtinTool = z.looseObject({ type: z.string().min(1).max(64) });

/** One tool; checked by `type` so the error names the right field. */
export const responsesTool = z.unknown().transform((tool, ctx) => {
  const type = tool !== null && typeof tool === "object" ? (tool as { type?: unknown }).type : undefined;
  const schema = type === "function" ? functionTool : type === "namespace" ? namespaceTool : type === "custom" ? customTool : builtinTool;
  const parsed = schema.safeParse(tool);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  return z.NEVER;
});

type FunctionTool = z.infer<typeof functionTool>;
type BuiltinTool = { type: string } & Record<string, unknown>;
export type ResponsesTool = FunctionTool | z.infer<typeof namespaceTool> | z.infer<typeof customTool> | BuiltinTool;

export const responsesToolChoice = z.union(
  [
    z.enum(["none", "auto", "required"]),
    z.object({ type: z.literal("function"), name: functionName, namespace: z.string().min(1).max(128).optional() }),
    z.object({ type: z.literal("custom"), name: functionName }),
  ],
  { error: 'expected "none", "auto", "required", {"type":"function","name":...} or {"type":"custom","name":...}' },
);
export type ResponsesToolChoice = z.infer<typeof responsesToolChoice>;

type ChatTool = NonNullable<ChatRequest["tools"]>[number];

export interface TranslatedTools {
  /** Function tools for the provider, in the request's order. */
  tools: ChatTool[];
  /** Provider-facing name → the client's name, for the tools Router renamed. */
  names: ClientToolNames;
  /** Built-in tools by type, in the request's order, each once. */
  builtin: string[];
}

const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const SEPARATOR = "__";

/**
 * The flat name of a namespaced function, as Codex itself joins them (`multi_agent_v1__spawn_agent`).
 * A join that a provider would refuse (too long, other characters) or that another tool already
 * has is shortened with a hash of the pair, so it stays unique and within 64 characters.
 */
export function flatToolName(namespace: string, name: string, taken: ReadonlySet<string> = new Set()): string {
  const joined = `${namespace.replace(/_+$/, "")}${SEPARATOR}${name.replace(/^_+/, "")}`;
  if (PROVIDER_NAME.test(joined) && !taken.has(joined)) return joined;
  const hash = createHash("sha256").update(`${namespace}\0${name}`).digest("hex").slice(0, 8);
  return `${joined.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 55)}_${hash}`;
}

/** Maps a Responses request's tools to chat function tools and built-in tool names (see the module comment). */
export function translateTools(tools: readonly ResponsesTool[]): TranslatedTools {
  const out: ChatTool[] = [];
  const names = new Map<string, ClientToolName>();
  const builtin: string[] = [];
  // Plain function and custom names first, so a flattened name never takes one of them.
  const taken = new Set<string>(tools.flatMap((t) => (t.type === "function" || t.type === "custom" ? [t.name as string] : [])));
  for (const tool of tools) {
    if (isFunction(tool)) out.push(chatFunction(tool.name, tool));
    else if (isNamespace(tool)) {
      for (const fn of tool.tools) {
        const flat = flatToolName(tool.name, fn.name, taken);
        taken.add(flat);
        names.set(flat, { kind: "function", name: fn.name, namespace: tool.name });
        const described = tool.description ? `${tool.description}\n\n${fn.description ?? ""}`.trim() : fn.description;
        out.push(chatFunction(flat, { ...fn, description: described }));
      }
    } else if (isCustom(tool)) {
      names.set(tool.name, { kind: "custom", name: tool.name });
      out.push({ type: "function", function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: customParameters(tool) } });
    } else if (!builtin.includes(tool.type)) builtin.push(tool.type);
  }
  return { tools: out, names, builtin };
}

/** The provider-facing name of a function the client names by namespace and name (a call in history, a tool_choice). */
export function providerToolName(names: ClientToolNames, name: string, namespace: string | undefined): string {
  if (namespace === undefined) return name;
  for (const [flat, client] of names) {
    if (client.kind === "function" && client.namespace === namespace && client.name === name) return flat;
  }
  return flatToolName(namespace, name);
}

/** The chat `tool_choice` for a Responses one. */
export function chatToolChoice(choice: ResponsesToolChoice, names: ClientToolNames): NonNullable<ChatRequest["tool_choice"]> {
  if (typeof choice === "string") return choice;
  const name = choice.type === "function" ? providerToolName(names, choice.name, choice.namespace) : choice.name;
  return { type: "function", function: { name } };
}

/** A custom tool's call arguments as the freeform text the client expects; the raw arguments when they are not `{"input": ...}`. */
export function customToolInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === "object" && typeof (parsed as { input?: unknown }).input === "string") {
      return (parsed as { input: string }).input;
    }
  } catch {
    // A model that answered the text itself instead of the JSON object: that text is the input.
  }
  return args;
}

/** The JSON arguments of a custom tool call in history, as the provider called the function. */
export const customToolArguments = (input: string): string => JSON.stringify({ input });

function chatFunction(name: string, t: Pick<FunctionTool, "description" | "parameters" | "strict">): ChatTool {
  return {
    type: "function",
    function: {
      name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
      ...(t.strict != null ? { strict: t.strict } : {}),
    },
  };
}

/** One required string, `input`; a grammar goes into its description, since no provider's function tool takes one. */
function customParameters(tool: z.infer<typeof customTool>): Record<string, unknown> {
  const f = tool.format;
  const grammar = f && f.type === "grammar" && f.definition ? `The text must follow this ${f.syntax ?? ""} grammar:\n${f.definition}` : null;
  return {
    type: "object",
    properties: { input: { type: "string", description: grammar ? `The tool's freeform input. ${grammar}` : "The tool's freeform input." } },
    required: ["input"],
    additionalProperties: false,
  };
}

const isFunction = (t: ResponsesTool): t is FunctionTool => t.type === "function";
const isNamespace = (t: ResponsesTool): t is z.infer<typeof namespaceTool> => t.type === "namespace";
const isCustom = (t: ResponsesTool): t is z.infer<typeof customTool> => t.type === "custom";
