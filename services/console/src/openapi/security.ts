import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";

/**
 * The credential classes: inference key, management key (both bearer), the dashboard session cookie,
 * the payment processor's signature on the events it posts, and the uptime probes' token.
 */
export function registerSecuritySchemes(registry: OpenAPIRegistry): void {
  registry.registerComponent("securitySchemes", "inferenceKey", {
    type: "http",
    scheme: "bearer",
    description: "An inference key, `rt-v1-...`",
  });
  registry.registerComponent("securitySchemes", "inferenceApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An inference key, `rt-v1-...`, as Anthropic clients send it (`POST /v1/messages` only)",
  });
  registry.registerComponent("securitySchemes", "managementKey", {
    type: "http",
    scheme: "bearer",
    description: "A management key, `rt-mgmt-...`",
  });
  registry.registerComponent("securitySchemes", "session", {
    type: "apiKey",
    in: "cookie",
    name: "rt_session",
    description: "A dashboard session; writes also send `x-csrf-token` equal to the `rt_csrf` cookie",
  });
  registry.registerComponent("securitySchemes", "processorSignature", {
    type: "apiKey",
    in: "header",
    name: "Stripe-Signature",
    description: "The payment processor's (Stripe's) signature over the exact body, with its signing time; for the processor only",
  });
  registry.registerComponent("securitySchemes", "probeToken", {
    type: "http",
    scheme: "bearer",
    description: "The uptime probes' token, ROUTER_PROBE_TOKEN (`POST /v1/status/probes` only)",
  });
}
