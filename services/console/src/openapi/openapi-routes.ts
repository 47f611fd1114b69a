import { Router } from "express";
import type * as OpenApiDocumentModule from "./document";
import { OPENAPI_JSON_PATH, OPENAPI_YAML_PATH } from "./meta";

/**
 * `GET /openapi.json` and `GET /openapi.yaml` (public; the gateway forwards them, limited per client
 * address). The document depends only on the code and the version, so it is built once, on the
 * first request: building it (and loading the OpenAPI generator and the YAML writer) took about
 * 0.2 s of every start, and its two renderings stayed in memory in deployments nobody reads it from.
 */
export function openApiRoutes(deps: { version: string }): Router {
  let rendered: { json: string; yaml: string } | undefined;
  const render = (): { json: string; yaml: string } => {
    if (!rendered) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { buildOpenApiDocument, openApiYaml } = require("./document") as typeof OpenApiDocumentModule;
      const document = buildOpenApiDocument(deps.version);
      rendered = { json: JSON.stringify(document), yaml: openApiYaml(document) };
    }
    return rendered;
  };
  const router = Router();
  router.get(OPENAPI_JSON_PATH, (_req, res) => {
    res.type("application/json").send(render().json);
  });
  router.get(OPENAPI_YAML_PATH, (_req, res) => {
    res.type("application/yaml").send(render().yaml);
  });
  return router;
}
