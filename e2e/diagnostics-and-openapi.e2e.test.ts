import { gatewayClient, startStack, type Stack } from "@router/testkit";

/**
 * The operator diagnostics and the API description on the separate-process stack: the endpoint
 * health age comes from the real routing process over its internal route, with the identity the
 * gateway signs; the description is served by the built gateway with its version.
 */
describe("operator diagnostics and the OpenAPI description through the separate-process stack", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ providerBaseUrls: {} });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("gives an operator the endpoint health age and the guardrails and catalog caches' counters from routing, and anyone else a 404", async () => {
    const operator = await stack.createOrg("Ops", { operator: true });
    const res = await gatewayClient(stack.gatewayUrl, operator.managementKey).get("/v1/health");
    expect(res.status).toBe(200);
    const data = res.json.data;
    expect(typeof data.endpoint_health_age_ms).toBe("number");
    expect(data.endpoint_health_age_ms).toBeGreaterThanOrEqual(0);
    // Routing rebuilds its health snapshot every few seconds: the age stays under a minute.
    expect(data.endpoint_health_age_ms).toBeLessThan(60_000);
    expect(data.caches.auth.size).toBeGreaterThanOrEqual(1);
    // Routing counts its own caches: the catalog holds the bundled models, the guardrails cache is counted.
    expect(data.caches.catalog.size).toBeGreaterThan(10);
    expect(data.caches.catalog.miss).toBeGreaterThanOrEqual(1);
    expect(data.caches.guardrails).toEqual(expect.objectContaining({ hit: expect.any(Number), miss: expect.any(Number), stale: expect.any(Number), size: expect.any(Number) }));

    const other = await stack.createOrg("Customer");
    const refused = await gatewayClient(stack.gatewayUrl, other.managementKey).get("/v1/health");
    expect(refused.status).toBe(404);
  });

  it("serves the description with /health's version", async () => {
    const [description, health] = await Promise.all([fetch(`${stack.gatewayUrl}/openapi.json`), fetch(`${stack.gatewayUrl}/health`)]);
    expect(description.status).toBe(200);
    const doc = (await description.json()) as { info: { version: string }; paths: Record<string, unknown> };
    expect(doc.info.version).toBe(((await health.json()) as { version: string }).version);
    expect(Object.keys(doc.paths)).toContain("/v1/chat/completions");
  });
});
