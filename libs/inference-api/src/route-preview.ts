import { chatBodySchema } from "@router/chat-request";

/**
 * The preview's body: the chat route's routing fields, with the chat route's own schemas (messages
 * optional: they only feed content filters). Anything else is refused, naming it.
 */
export const previewBodySchema = chatBodySchema.pick({
  model: true,
  models: true,
  provider: true,
  tools: true,
  messages: true,
  session_id: true,
  prompt_cache_key: true,
  routing_stability: true,
  routing_seed: true,
});
