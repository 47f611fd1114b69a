import SwaggerParser from "@apidevtools/swagger-parser";
import { parse } from "yaml";
import { call, startHarness, type Harness } from "../harness";
import { describedOperations, routeMismatches } from "./route-coverage";

describe("the OpenAPI description", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness("gwopenapi");
  });
  afterAll(async () => {
    await h.close();
  });

  it("is served as JSON and YAML, the same document, with /health's version", async () => {
    const json = await call(h.url, "GET", "/openapi.json");
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    const yaml = await fetch(`${h.url}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toMatch(/^application\/yaml/);
    expect(parse(await yaml.text())).toEqual(json.body);

    const health = await call(h.url, "GET", "/health");
    expect(json.body.openapi).toBe("3.1.0");
    expect(json.body.info.version).toBe(health.body.version);
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const document = (await call(h.url, "GET", "/openapi.json")).body;
    // The validator dereferences in place: it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
  });

  it("describes every route the gateway serves, and only those", async () => {
    const document = (await call(h.url, "GET", "/openapi.json")).body;
    expect(routeMismatches(h.gateway.routes, describedOperations(document))).toEqual([]);
  });

  it("describes request bodies with the schemas that validate them", async () => {
    const document = (await call(h.url, "GET", "/openapi.json")).body;
    const createKey = document.paths["/v1/keys"].post.requestBody.content["application/json"].schema;
    expect(createKey.properties.limit_mode.enum).toEqual(["hard", "soft"]);
    expect(createKey.properties.class.enum).toEqual(["inference", "management"]);
    const chat = document.paths["/v1/chat/completions"].post.requestBody.content["application/json"].schema;
    const chatSchema = chat.$ref ? document.components.schemas[chat.$ref.split("/").pop()] : chat;
    expect(chatSchema.properties.routing_stability.enum).toEqual(["adaptive", "sticky", "pinned"]);
  });

  it("is limited per client address like the other public metadata", async () => {
    const limited = await startHarness("gwopenapilimit", { rateLimits: { openapi: [{ points: 1, seconds: 60 }] } });
    try {
      expect((await call(limited.url, "GET", "/openapi.json")).status).toBe(200);
      const refused = await call(limited.url, "GET", "/openapi.yaml");
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("rate_limited");
    } finally {
      await limited.close();
    }
  });
});

describe("the route coverage check", () => {
  const served = [
    { method: "get", path: "/v1/keys" },
    { method: "patch", path: "/v1/keys/:hash" },
    { method: "all", path: "/v1/presets/*rest" },
  ];
  const described = [
    { method: "get", path: "/v1/keys" },
    { method: "patch", path: "/v1/keys/{hash}" },
    { method: "post", path: "/v1/presets/{slug}/versions" },
  ];

  it("passes when both agree, wildcards included", () => {
    expect(routeMismatches(served, described)).toEqual([]);
  });

  it("names a served route nobody described and a described one nobody serves", () => {
    expect(routeMismatches([...served, { method: "delete", path: "/v1/keys/:hash" }], [...described, { method: "get", path: "/v1/nothing" }])).toEqual([
      "described but not served: GET /v1/nothing",
      "served but not described: DELETE /v1/keys/:hash",
    ]);
  });
});
