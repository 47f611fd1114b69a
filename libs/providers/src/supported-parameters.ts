import type { ChatRequest } from "@router/chat-request";
import { UnsupportedRequest } from "./types";

/**
 * Fits a chat request to one endpoint by the catalog's `supported_parameters` (OpenRouter's names),
 * so that a hint the endpoint cannot take does not turn into a 400 that stops the cascade.
 *
 * - Sampling hints (`temperature`, `top_p`, `top_k`, `seed`, `stop`, `frequency_penalty`,
 *   `presence_penalty`) and `reasoning` (listed as `reasoning` or `include_reasoning`) are dropped
 *   when the endpoint does not list them.
 * - `response_format`: `json_schema` is kept where `structured_outputs` is listed, sent as
 *   `json_object` where only `response_format` is, dropped otherwise; `json_object` and `text` need
 *   `response_format`.
 * - `tools` are a capability, never a hint: a request with tools is refused for an endpoint that does
 *   not list `tools` (the dispatcher fails over to the next endpoint). A `tool_choice` the endpoint
 *   does not list is dropped when it is `auto` (what the provider does with tools anyway) and refused
 *   otherwise. `parallel_tool_calls` travels with the tools.
 * - With `provider.require_parameters`, whatever would be dropped or downgraded is refused instead
 *   (a `text` response format excepted: it asks for nothing).
 * - `messages`, `max_tokens`/`max_completion_tokens`, `stream` and the router's own fields are never
 *   touched. An empty list means the catalog does not know, so nothing is dropped.
 *
 * Runs per attempt on the hot path: the request is returned as is unless something is dropped, and
 * then copied shallowly once.
 */

/** What fitting needs to know about an endpoint; a routing `Candidate` has all of it. */
export interface EndpointParameters {
  modelId: string;
  providerSlug: string;
  /** Wire family of the provider: some adapters provide a parameter themselves (see `ADAPTER_PROVIDED`). */
  apiFamily: string;
  /** The catalog's `supported_parameters` for the endpoint; empty means unknown. */
  supportedParameters: readonly string[];
}

/** A field left out for an endpoint; `response_format.json_schema`: a schema sent as `json_object`. */
export type DroppedField = HintField | "tool_choice" | "response_format" | "response_format.json_schema";

export interface FittedRequest {
  /** The request to send to the endpoint: the caller's own object when nothing was dropped. */
  request: ChatRequest;
  /** What was left out, in a fixed order; empty when `request` is the caller's object. */
  dropped: readonly DroppedField[];
}

type HintField = "temperature" | "top_p" | "top_k" | "seed" | "stop" | "frequency_penalty" | "presence_penalty" | "reasoning";

/** Fields an endpoint may go without, each with the catalog names any one of which lets it through. */
const HINTS: ReadonlyArray<readonly [HintField, readonly string[]]> = [
  ["temperature", ["temperature"]],
  ["top_p", ["top_p"]],
  ["top_k", ["top_k"]],
  ["seed", ["seed"]],
  ["stop", ["stop"]],
  ["frequency_penalty", ["frequency_penalty"]],
  ["presence_penalty", ["presence_penalty"]],
  ["reasoning", ["reasoning", "include_reasoning"]],
];

const NOTHING: readonly never[] = Object.freeze([]);

/**
 * Parameters an adapter provides itself whatever the provider's API takes; the catalog describes
 * the API. The Anthropic adapter turns `response_format` (a JSON schema included) into a system
 * instruction (`jsonInstruction`), so dropping it there would lose what works today.
 */
const ADAPTER_PROVIDED: Readonly<Record<string, readonly string[]>> = {
  anthropic: ["response_format", "structured_outputs"],
};

const JSON_OBJECT = Object.freeze({ type: "json_object" as const });

/**
 * The request to send to one endpoint, with the names of the fields left out (see the module
 * comment for the rules). Throws `UnsupportedRequest` when the endpoint cannot serve the request:
 * tools it does not take, a forced `tool_choice` it does not take, or, under
 * `provider.require_parameters`, any field it does not list.
 */
export function fitToEndpoint(req: ChatRequest, endpoint: EndpointParameters): FittedRequest {
  const listed = endpoint.supportedParameters;
  if (listed.length === 0 || !asksForParameters(req)) return { request: req, dropped: NOTHING };
  const provided = ADAPTER_PROVIDED[endpoint.apiFamily] ?? NOTHING;
  const takes = (name: string): boolean => listed.includes(name) || provided.includes(name);
  const strict = req.provider?.require_parameters === true;
  const refuse = (field: string, what: string = field): UnsupportedRequest =>
    new UnsupportedRequest(field, `${endpoint.modelId} on ${endpoint.providerSlug} does not take ${what}`);
  const dropped: DroppedField[] = [];

  // An empty tools list asks for nothing (adapters send tools only when there are some).
  if (req.tools !== undefined && req.tools.length > 0) {
    if (!takes("tools")) throw refuse("tools");
    if (req.tool_choice !== undefined && !takes("tool_choice")) {
      if (req.tool_choice !== "auto" || strict) throw refuse("tool_choice", `tool_choice ${describeChoice(req.tool_choice)}`);
      dropped.push("tool_choice");
    }
  }

  for (const [field, names] of HINTS) {
    if (!setsHint(req, field) || names.some(takes)) continue;
    if (strict) throw refuse(field);
    dropped.push(field);
  }

  const format = req.response_format;
  const fitted = format && fitResponseFormat(format, takes);
  if (format && fitted === undefined) {
    // A text format asks for nothing, so even require_parameters has no reason to refuse it.
    if (strict && format.type !== "text") throw refuse("response_format", `response_format ${format.type}`);
    dropped.push("response_format");
  } else if (format && fitted !== format) {
    if (strict) throw refuse("response_format", "response_format json_schema (structured_outputs)");
    dropped.push("response_format.json_schema");
  }

  if (dropped.length === 0) return { request: req, dropped: NOTHING };
  const out: ChatRequest = { ...req };
  for (const field of dropped) {
    if (field === "response_format.json_schema") out.response_format = JSON_OBJECT;
    else delete out[field];
  }
  return { request: out, dropped };
}

/** Whether the request sets anything fitting could drop or refuse; most requests set nothing. */
function asksForParameters(req: ChatRequest): boolean {
  for (const [field] of HINTS) if (setsHint(req, field)) return true;
  return (req.tools !== undefined && req.tools.length > 0) || req.response_format !== undefined;
}

/** An explicit null asks for nothing, like an absent field. */
function setsHint(req: ChatRequest, field: HintField): boolean {
  return req[field] !== undefined && req[field] !== null;
}

function describeChoice(choice: NonNullable<ChatRequest["tool_choice"]>): string {
  return typeof choice === "string" ? `"${choice}"` : `naming function ${choice.function.name}`;
}

type ResponseFormat = NonNullable<ChatRequest["response_format"]>;

// A JSON schema sent as plain JSON mode still gets JSON back, which is closer to what was asked for
// than free text; where the endpoint takes neither, the field goes.
function fitResponseFormat(format: ResponseFormat, takes: (name: string) => boolean): ResponseFormat | undefined {
  if (format.type === "json_schema") {
    if (takes("structured_outputs")) return format;
    return takes("response_format") ? JSON_OBJECT : undefined;
  }
  return takes("response_format") ? format : undefined;
}
