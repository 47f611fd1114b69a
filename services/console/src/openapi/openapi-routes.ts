import { Router } from "express";
import { buildOpenApiDocument, openApiYaml } from "./document";
import { OPENAPI_JSON_PATH, OPENAPI_YAML_PATH } from "./meta";

/**
 * `GET /openapi.json` and `GET /openapi.yaml` (public; the gateway forwards them, limited per client
 * address). The document is built once at start: it depends only on the code and the version.
 */
export function openApiRoutes(deps: { version: string }): Router {
  const document = buildOpenApiDocument(deps.version);
  const json = JSON.stringify(document);
  const yaml = openApiYaml(document);
  const router = Router();
  router.get(OPENAPI_JSON_PATH, (_req, res) => {
    res.type("application/json").send(json);
  });
  router.get(OPENAPI_YAML_PATH, (_req, res) => {
    res.type("application/yaml").send(yaml);
  });
  return router;
}
