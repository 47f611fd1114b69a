import type { z } from "zod";
import { chatBodySchema, type ChatRequest } from "@router/chat-request";

/**
 * Router's own body fields (fallback models, provider preferences, sticky routing, runs), taken by
 * every ingress beside its format's fields, with the same rules as on the chat route.
 */
export const routerFields = chatBodySchema.pick({
  models: true,
  provider: true,
  session_id: true,
  prompt_cache_key: true,
  routing_stability: true,
  routing_seed: true,
  run_id: true,
}).shape;

type RouterFieldName = keyof typeof routerFields;

/** The router's fields of a parsed body, as the internal chat request carries them. */
export function routerFieldValues(b: { [K in RouterFieldName]?: z.infer<(typeof routerFields)[K]> }): Pick<ChatRequest, RouterFieldName> {
  return {
    models: b.models,
    provider: b.provider,
    session_id: b.session_id,
    prompt_cache_key: b.prompt_cache_key,
    routing_stability: b.routing_stability,
    routing_seed: b.routing_seed,
    run_id: b.run_id,
  };
}
