import { call, newOrganisation, startHarness, type Harness } from "./harness";

/**
 * The routes whose bodies the gateway forwards unread for the console to read (MCP's JSON-RPC,
 * browsers' CSP reports) keep to the same depth limit as the shared parser, each in its own error
 * form: through the gateway to the real console beside it.
 */

const DEEP = 100_000;
const deepObject = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

let h: Harness;
let inference: string;

beforeAll(async () => {
  h = await startHarness("gwdepth");
  const mgmt = (await newOrganisation(h)).managementKey;
  inference = (await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "inference" } })).body.data.key;
});
afterAll(() => h.close());

describe("bodies a route reads itself", () => {
  it("answers an MCP message nested too deep with a JSON-RPC invalid request naming the field", async () => {
    const res = await call(h.url, "POST", "/mcp", {
      key: inference,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_models","arguments":${deepObject(DEEP)}}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "params.arguments.a.a.a.a.a.a: nested more than 128 levels deep" },
    });
  });

  it("answers a CSP report nested too deep with a 400 naming the field", async () => {
    const res = await call(h.url, "POST", "/csp-report", {
      headers: { "content-type": "application/csp-report" },
      // Reports are taken up to 64 kB: 10,000 levels fit.
      rawBody: `{"csp-report":${deepObject(10_000)}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field: "csp-report.a.a.a.a.a.a.a", max_depth: 128 } });
  });
});
