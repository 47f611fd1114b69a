import { chatBodySchema } from "../chat/request-schema";

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
