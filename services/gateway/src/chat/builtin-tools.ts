import type { Candidate } from "../dispatch/types";
import type { NativeBody } from "../ingress/ingress";
import { Refused } from "./admission";

/**
 * Built-in tools: tools a provider runs itself (OpenAI's `web_search`, `file_search`,
 * `code_interpreter`, ...; Anthropic's server tools such as `web_search_20250305`). An ingress names
 * them in `ParsedRequest.builtinTools`; an endpoint that cannot run one is sent the request without
 * it, and the request says so: the `x-router-dropped-tools` header and `dropped_tools` on its
 * record. Under `provider.require_parameters` such an endpoint is passed over instead, and a
 * request no endpoint of its route can serve is refused (400 naming the tool).
 */

export const DROPPED_TOOLS_HEADER = "x-router-dropped-tools";

/** What deciding needs of an endpoint; a routing `Candidate` has it. */
export type ToolEndpoint = Pick<Candidate, "apiFamily" | "providerSlug">;

/**
 * Whether an endpoint runs the request's built-in tools: they are written in the format the request
 * came in, so only an endpoint sent the client's own body (`native`, same wire family) gets them:
 * Anthropic's server tools on a Messages request served by Anthropic. No endpoint in the catalog
 * speaks the Responses API, so OpenAI's built-ins run nowhere.
 */
export function runsBuiltinTools(endpoint: ToolEndpoint, native: NativeBody | null): boolean {
  return native !== null && native.family === endpoint.apiFamily;
}

/** The built-in tools `endpoint` cannot run, in the request's order. */
export function droppedBuiltinTools(tools: readonly string[], endpoint: ToolEndpoint, native: NativeBody | null): string[] {
  return runsBuiltinTools(endpoint, native) ? [] : [...tools];
}

/** The header naming dropped tools (comma-separated); none when nothing was dropped. */
export function droppedToolsHeader(dropped: readonly string[]): Record<string, string> {
  return dropped.length ? { [DROPPED_TOOLS_HEADER]: dropped.join(",") } : {};
}

/**
 * The cascade a request may be dispatched to: all of it, unless `provider.require_parameters`
 * forbids dropping a built-in tool; then the endpoints that run every one of them, and a refusal
 * naming the first tool when none does.
 */
export function cascadeForBuiltinTools(cascade: Candidate[], tools: readonly string[], requireParameters: boolean, native: NativeBody | null): Candidate[] {
  if (!requireParameters || tools.length === 0) return cascade;
  const runnable = cascade.filter((c) => runsBuiltinTools(c, native));
  if (runnable.length > 0) return runnable;
  const missing = [...tools];
  const tool = missing[0] ?? tools[0]!;
  throw new Refused(
    "invalid_request",
    `tools: ${tool} is a built-in tool that no endpoint of this route runs, and provider.require_parameters forbids dropping it`,
    { status: 400, details: { field: "tools", tools: missing } },
  );
}
