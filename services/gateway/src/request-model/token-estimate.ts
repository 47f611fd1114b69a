import type { ChatRequest } from "@router/chat-request";

/**
 * Input-token counts that no provider answered (`POST /v1/messages/count_tokens` for a model another
 * family serves, `POST /v1/responses/input_tokens`): a tokenizer's count, marked as an estimate.
 */

/** Says where an answer's count came from: `provider` (the provider's own count) or `estimate`. */
export const TOKEN_COUNT_HEADER = "x-router-token-count";

/** About what Anthropic charges for one image at the size it scales images to; an estimate, as the rest. */
const IMAGE_TOKENS = 1600;

/** A tokenizer's count of the text of the request and its tools, plus a fixed share per image. */
export async function estimatedInputTokens(request: ChatRequest): Promise<number> {
  // Loaded on first use: its vocabulary is megabytes that a gateway never counting tokens should not hold.
  const { countTokens } = await import("gpt-tokenizer");
  let images = 0;
  let text = "";
  for (const m of request.messages) {
    if (typeof m.content === "string") text += `${m.content}\n`;
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (part.type === "text") text += `${part.text}\n`;
        else images++;
      }
    }
    if (m.role === "assistant") for (const call of m.tool_calls ?? []) text += `${call.function.name} ${call.function.arguments}\n`;
  }
  if (request.tools?.length) text += JSON.stringify(request.tools);
  return countTokens(text) + images * IMAGE_TOKENS;
}
