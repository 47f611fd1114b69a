import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { stringify } from "yaml";
import { registerChatPaths } from "./chat";
import { registerIngressPaths } from "./ingress";
import { registerForwardedPaths } from "./forwarded";
import { registerMetaPaths } from "./meta";
import { registerSecuritySchemes } from "./security";
import { registerSignInPaths } from "./sign-in";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

/**
 * The OpenAPI 3.1 description of every public route, built from the zod schemas the routes
 * validate with; `version` is the deployment's, the same `/health` reports.
 */
export function buildOpenApiDocument(version: string): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerSecuritySchemes(registry);
  registerChatPaths(registry);
  registerIngressPaths(registry);
  registerSignInPaths(registry);
  registerForwardedPaths(registry);
  registerMetaPaths(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Router",
      version,
      description: "LLM inference routing gateway. `/v1` JSON answers are `{\"data\": ...}`; errors are `{\"error\": {...}}`.",
    },
  });
}

/** The same document as YAML. */
export function openApiYaml(document: OpenApiDocument): string {
  return stringify(document, { aliasDuplicateObjects: false });
}
