import { azureWire, type RecordedRequest } from "@router/testkit";
import { credentialServes } from "../../src/dispatch/upstream-target";
import type { AzureCredential, CloudCredential } from "@router/providers";
import { azureCredentialSchema } from "@router/providers";
import { adapterFor } from "@router/providers";
import { UnsupportedRequest, type UpstreamHttpRequest } from "@router/providers";
import type { Candidate } from "../../src/dispatch/types";
import { bodyOf, chat, target, thrown } from "./wire-samples";

const azure = adapterFor("openai", "azure")!;
const document = (o: Partial<AzureCredential> = {}): CloudCredential => ({
  provider: "azure",
  endpoint: "https://contoso-eu.openai.azure.com",
  region: "swedencentral",
  api_version: "2024-10-21",
  deployments: { "openai/gpt-4o-mini": "mini-prod" },
  api_key: "azure-key-0123456789",
  ...o,
});
const azureTarget = (o: Partial<AzureCredential> = {}) =>
  target({ providerSlug: "azure", baseUrl: "https://openai.azure.com", modelId: "openai/gpt-4o-mini", upstreamModel: "gpt-4o-mini", apiKey: "", cloud: document(o), region: "swedencentral" });

const wire = azureWire({ apiKeys: ["azure-key-0123456789"], deployments: { "mini-prod": "gpt-4o-mini" } });
/** The fake resource's verdict on a request the adapter built: null when it would serve it. */
async function refusal(req: UpstreamHttpRequest) {
  const recorded: RecordedRequest = {
    method: "POST",
    path: req.url.pathname,
    query: Object.fromEntries(req.url.searchParams),
    headers: req.headers,
    body: JSON.parse(req.body),
    receivedAt: 0,
    clientClosed: false,
  };
  expect(wire.route("POST", recorded.path, recorded.query, recorded.body)).not.toBeNull();
  return (await wire.reject?.(recorded)) ?? null;
}

describe("Azure OpenAI adapter", () => {
  it("sends OpenAI's body to the deployment with the API version and the resource's key", async () => {
    const req = azure.buildRequest(chat({ max_tokens: 50 }), azureTarget(), true);
    expect(req.url.toString()).toBe("https://contoso-eu.openai.azure.com/openai/deployments/mini-prod/chat/completions?api-version=2024-10-21");
    expect(req.headers["api-key"]).toBe("azure-key-0123456789");
    expect(req.headers).not.toHaveProperty("authorization");
    expect(bodyOf(req)).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_completion_tokens: 50 });
    expect(await refusal(req)).toBeNull();
  });

  it("goes to the operator's base URL for Azure when one is set (a proxy in front of Azure)", () => {
    const req = azure.buildRequest(chat({}), { ...azureTarget(), baseUrl: "http://127.0.0.1:9999" }, false);
    expect(req.url.toString()).toBe("http://127.0.0.1:9999/openai/deployments/mini-prod/chat/completions?api-version=2024-10-21");
  });

  it("names the deployment in the body on the v1 API", async () => {
    const req = azure.buildRequest(chat({}), azureTarget({ api_version: "v1" }), false);
    expect(req.url.toString()).toBe("https://contoso-eu.openai.azure.com/openai/v1/chat/completions");
    expect(bodyOf(req).model).toBe("mini-prod");
    expect(await refusal(req)).toBeNull();
  });

  it("is refused by the resource with a wrong key or an API version it does not know", async () => {
    expect((await refusal(azure.buildRequest(chat({}), azureTarget({ api_key: "someone-elses-key" }), false)))?.status).toBe(401);
    expect((await refusal(azure.buildRequest(chat({}), azureTarget({ api_version: "2023-01-01" }), false)))?.status).toBe(404);
  });

  it("sends embeddings to the deployment's embeddings operation", () => {
    const t = target({ ...azureTarget(), modelId: "openai/text-embedding-3-small", cloud: document({ deployments: { "openai/text-embedding-3-small": "embed" } }) });
    const req = azure.embeddings!.buildRequest({ input: ["a"], encodingFormat: "float" }, t);
    expect(req.url.pathname).toBe("/openai/deployments/embed/embeddings");
    expect(req.url.searchParams.get("api-version")).toBe("2024-10-21");
  });

  it("refuses a model the resource has no deployment for, naming it", () => {
    const err = thrown(() => azure.buildRequest(chat({}), target({ ...azureTarget(), modelId: "openai/gpt-4o" }), false));
    expect(err).toBeInstanceOf(UnsupportedRequest);
    expect((err as Error).message).toContain("openai/gpt-4o");
  });

  it("pairs a credential only with endpoints in its region and models it deploys", () => {
    const credential = { id: "pk_1", providerSlug: "azure", apiKey: "", cloud: document(), tier: "prioritized" as const, priority: 0, fallbackPolicy: "platform" as const, modelFilter: {} };
    const candidate = (o: Partial<Candidate>) => ({ modelId: "openai/gpt-4o-mini", deploymentRegion: "swedencentral", ...o }) as Candidate;
    expect(credentialServes(credential, candidate({}))).toBe(true);
    expect(credentialServes(credential, candidate({ deploymentRegion: "eastus2" }))).toBe(false);
    expect(credentialServes(credential, candidate({ modelId: "openai/gpt-4o" }))).toBe(false);
  });
});

describe("Azure credential document", () => {
  const base = { endpoint: "https://contoso.openai.azure.com/", region: "SwedenCentral", deployments: { "openai/gpt-4o": "gpt4o" }, api_key: "k-123456789" };

  it("takes a key or Entra client credentials, never both or neither", () => {
    expect(azureCredentialSchema.parse(base)).toMatchObject({ endpoint: "https://contoso.openai.azure.com", region: "swedencentral", api_version: "2024-10-21" });
    const entra = { tenant_id: "t", client_id: "c", client_secret: "s3cret-value" };
    expect(azureCredentialSchema.safeParse({ ...base, api_key: undefined, entra }).success).toBe(true);
    const both = azureCredentialSchema.safeParse({ ...base, entra });
    expect(both.success).toBe(false);
    expect(both.error?.issues[0]?.path).toEqual(["api_key"]);
    expect(azureCredentialSchema.safeParse({ ...base, api_key: undefined }).success).toBe(false);
  });

  it("takes only an Azure resource's https endpoint: an organisation cannot send prompts to a host of its choosing", () => {
    for (const endpoint of ["http://contoso.openai.azure.com", "https://169.254.169.254", "https://evil.example/openai.azure.com", "https://openai.azure.com.evil.example"]) {
      const r = azureCredentialSchema.safeParse({ ...base, endpoint });
      expect([endpoint, r.error?.issues[0]?.path]).toEqual([endpoint, ["endpoint"]]);
    }
    expect(azureCredentialSchema.safeParse({ ...base, endpoint: "https://contoso.cognitiveservices.azure.com" }).success).toBe(true);
  });

  it("names the field that is missing or wrong", () => {
    const noDeployments = azureCredentialSchema.safeParse({ ...base, deployments: {} });
    expect(noDeployments.error?.issues[0]?.path).toEqual(["deployments"]);
    const badModel = azureCredentialSchema.safeParse({ ...base, deployments: { "gpt-4o": "x" } });
    expect(badModel.error?.issues[0]?.path[0]).toBe("deployments");
  });
});
