import { FREE_FORM, MANAGEMENT_ROUTES } from "@router/management-api";
import { buildOpenApiDocument } from "../src/openapi/document";

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keywords whose value is one schema, or a list of them, or a map of them. */
const ONE = ["items", "additionalProperties", "not", "contains", "propertyNames"];
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "patternProperties"];

/**
 * Every place under `schema` that says nothing about its content: `additionalProperties: true`, an
 * empty schema, or an object with neither properties nor a schema for its values. A schema marked
 * free-form on purpose (`x-free-form`) is let through.
 */
function looseSpots(schema: unknown, where: string, components: Record<string, Schema>, out: string[]): void {
  if (!isSchema(schema) || schema[FREE_FORM] === true) return;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop() ?? "";
    return looseSpots(components[name], `${where}->${name}`, components, out);
  }
  const keywords = Object.keys(schema).filter((k) => !["description", "default", "example", "examples", "title"].includes(k));
  if (keywords.length === 0) out.push(`${where}: empty schema`);
  if (schema.additionalProperties === true) out.push(`${where}: additionalProperties true`);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("object") && !isSchema(schema.properties) && !isSchema(schema.additionalProperties)) out.push(`${where}: object with no fields`);
  if (types.includes("object") && isSchema(schema.additionalProperties) && Object.keys(schema.additionalProperties).length === 0 && !isSchema(schema.properties)) {
    out.push(`${where}: object of anything`);
  }
  for (const k of ONE) if (isSchema(schema[k])) looseSpots(schema[k], `${where}.${k}`, components, out);
  for (const k of LIST) if (Array.isArray(schema[k])) (schema[k] as unknown[]).forEach((s, i) => looseSpots(s, `${where}.${k}[${i}]`, components, out));
  for (const k of MAP) if (isSchema(schema[k])) for (const [name, s] of Object.entries(schema[k])) looseSpots(s, `${where}.${name}`, components, out);
}

/**
 * The schemas of one operation the owner defines: parameters, request body and the success answer
 * (refusals are the shared error envelope, whose `details` are free-form by design).
 */
function operationSchemas(operation: Schema, success: number): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  for (const p of (operation.parameters as Schema[] | undefined) ?? []) found.push([`param ${String(p.name)}`, p.schema]);
  const body = (operation.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined;
  for (const [type, c] of Object.entries(body ?? {})) found.push([`body ${type}`, c.schema]);
  const answer = (operation.responses as Record<string, Schema>)[String(success)];
  for (const [type, c] of Object.entries((answer?.content as Record<string, Schema> | undefined) ?? {})) found.push([`${success} ${type}`, c.schema]);
  return found;
}

describe("the forwarded routes in the OpenAPI document", () => {
  const document = buildOpenApiDocument("test") as unknown as { paths: Record<string, Record<string, Schema>>; components?: { schemas?: Record<string, Schema> } };
  const components = document.components?.schemas ?? {};

  it("describes every management route from its description, with its method and path", () => {
    for (const route of MANAGEMENT_ROUTES) {
      const operation = document.paths[route.openApiPath]?.[route.method];
      expect([route.key, operation?.summary]).toEqual([route.key, route.summary]);
    }
  });

  it("has no loose schema in any forwarded operation, free-form fields marked as such aside", () => {
    const problems: string[] = [];
    for (const route of MANAGEMENT_ROUTES) {
      const operation = document.paths[route.openApiPath]?.[route.method];
      if (!operation) continue;
      for (const [part, schema] of operationSchemas(operation, route.status ?? 200)) looseSpots(schema, `${route.key} ${part}`, components, problems);
    }
    expect(problems).toEqual([]);
  });

  it("finds a loose schema when there is one", () => {
    const problems: string[] = [];
    const loose = { type: "object", properties: { a: { type: "object", additionalProperties: true, properties: {} }, b: {}, c: { type: "object" } } };
    looseSpots(loose, "x", {}, problems);
    looseSpots({ type: "object", additionalProperties: {}, [FREE_FORM]: true }, "free", {}, problems);
    expect(problems).toEqual(["x.a: additionalProperties true", "x.b: empty schema", "x.c: object with no fields"]);
  });

  it("takes request bodies and answers from the owners' schemas", () => {
    const guardrail = document.paths["/v1/guardrails"]?.post?.requestBody as Schema;
    const schema = (guardrail.content as Record<string, Schema>)["application/json"]?.schema as Schema;
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties as Schema)).toContain("content_filter_builtins");
    const budgets = (document.paths["/v1/workspaces/{id}/budgets"]?.get?.responses as Record<string, Schema>)["200"];
    expect(JSON.stringify(budgets)).toContain("limit_nanodollars");
  });
});
