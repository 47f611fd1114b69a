import type { ChatRequest } from "@router/chat-request";
import { REASONING_FLOOR } from "../message-content";
import { asRecord, type UpstreamHttpRequest, type UpstreamTarget } from "../types";
import { anthropicHeaders, messagesUrl } from "./request";

/**
 * A Messages request from the client's own Messages body (same-family fidelity): cache markers,
 * beta features, block and tool types and fields Router does not model all reach Anthropic as the
 * client wrote them. Router changes only what it acts on:
 * - the model (the endpoint's own name) and `stream`;
 * - sampling settings a preset filled in (the internal request carries them);
 * - `max_tokens` above the endpoint's maximum output, clamped to it (a thinking budget with it);
 * - `system` messages inside `messages` (agents send them for models they do not know; Anthropic
 *   refuses the role): one at the start joins the system prompt, a later one becomes user text;
 * - adaptive thinking and `output_config.effort` for a model that predates them, sent as a
 *   thinking budget of the same effort (the API refuses them there).
 */
export function buildAnthropicNativeRequest(native: Record<string, unknown>, req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest {
  return { url: messagesUrl(target), headers: anthropicHeaders(target, stream), body: JSON.stringify(anthropicNativeBody(native, req, target, stream)) };
}

/** The body `buildAnthropicNativeRequest` sends, as an object (the token count cuts it to its own fields). */
export function anthropicNativeBody(native: Record<string, unknown>, req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { ...native, model: target.upstreamModel };
  if (stream) body.stream = true;
  else delete body.stream;
  // Thinking takes no sampling settings: a preset's would make the request fail.
  if (body.thinking === undefined) {
    if (body.temperature === undefined && req.temperature !== undefined) body.temperature = Math.min(1, req.temperature);
    if (body.top_p === undefined && req.top_p !== undefined) body.top_p = req.top_p;
    if (body.top_k === undefined && req.top_k !== undefined) body.top_k = req.top_k;
  }
  if (Array.isArray(native.messages)) foldSystemMessages(body, native.messages);
  const maxTokens = typeof body.max_tokens === "number" ? body.max_tokens : 0;
  if (target.maxOutputTokens > 0 && maxTokens > target.maxOutputTokens) body.max_tokens = target.maxOutputTokens;
  fitThinking(body, target.upstreamModel);
  return body;
}

type Block = Record<string, unknown>;
type Turn = { role: string; content: unknown };

const textBlocks = (content: unknown): Block[] => (typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? (content as Block[]) : []);

/**
 * Leading system messages join `system`; a later one becomes text at the end of the next user turn
 * (or the one before): a user turn that answers tool calls must start with its tool results.
 */
function foldSystemMessages(body: Record<string, unknown>, messages: unknown[]): void {
  if (!messages.some((m) => asRecord(m)?.role === "system")) return;
  const turns: Turn[] = messages.map((m) => ({ ...(asRecord(m) as Turn) }));
  const leading: Block[] = [];
  while (turns[0]?.role === "system") leading.push(...textBlocks(turns.shift()?.content));
  if (leading.length) body.system = [...textBlocks(body.system), ...leading];
  const out: Turn[] = [];
  const pending: Block[] = [];
  for (const turn of turns) {
    if (turn.role === "system") {
      pending.push(...textBlocks(turn.content));
      continue;
    }
    if (pending.length && turn.role === "user") {
      out.push({ ...turn, content: [...textBlocks(turn.content), ...pending.splice(0)] });
      continue;
    }
    out.push(turn);
  }
  if (pending.length) {
    const last = out[out.length - 1];
    if (last?.role === "user") last.content = [...textBlocks(last.content), ...pending];
    else out.push({ role: "user", content: pending });
  }
  body.messages = out;
}

/**
 * Models with a fixed thinking budget only (before Claude 4.6): the dated ids and aliases of
 * Claude 3.x and of Claude 4, 4.1 and 4.5. Newer models take adaptive thinking and effort.
 */
const BUDGET_ONLY = /^claude-(?:3|(?:opus|sonnet|haiku)-4(?:-[015])?(?:-\d{8}|$))/;

/** Share of max_tokens a budget gets for an effort, as for other families' reasoning effort. */
const EFFORT_SHARE: Record<string, number> = { low: 0.2, medium: 0.5, high: 0.8, max: 0.8, xhigh: 0.8 };

/**
 * Keeps thinking within what the model takes: adaptive (and effort) as a budget on older models, and
 * a budget below max_tokens, or no thinking when max_tokens leaves no room for the 1024 floor.
 */
function fitThinking(body: Record<string, unknown>, model: string): void {
  const thinking = asRecord(body.thinking);
  const maxTokens = typeof body.max_tokens === "number" ? body.max_tokens : 0;
  const output = asRecord(body.output_config);
  if (BUDGET_ONLY.test(model)) {
    const effort = typeof output?.effort === "string" ? output.effort : "high";
    if (output && "effort" in output) {
      const { effort: _effort, ...rest } = output;
      if (Object.keys(rest).length) body.output_config = rest;
      else delete body.output_config;
    }
    if (thinking?.type === "adaptive") body.thinking = { type: "enabled", budget_tokens: Math.floor(maxTokens * (EFFORT_SHARE[effort] ?? 0.8)) };
  }
  const fitted = asRecord(body.thinking);
  if (fitted?.type !== "enabled" || typeof fitted.budget_tokens !== "number") return;
  const budget = Math.min(Math.max(fitted.budget_tokens, REASONING_FLOOR), maxTokens - 1);
  if (budget < REASONING_FLOOR) {
    delete body.thinking;
    return;
  }
  if (budget !== fitted.budget_tokens) body.thinking = { ...fitted, budget_tokens: budget };
}
