import { providerBaseUrls } from "@router/config";

describe("provider base URL overrides", () => {
  it("collects ROUTER_PROVIDER_<SLUG>_BASE_URL by lower-case slug", () => {
    expect(
      providerBaseUrls({
        ROUTER_PROVIDER_OPENAI_BASE_URL: "http://127.0.0.1:9000/v1/",
        ROUTER_PROVIDER_VLLM_BASE_URL: "https://vllm.internal/v1",
        ROUTER_PROVIDER_EMPTY_BASE_URL: "",
        OTHER: "x",
      }),
    ).toEqual({ openai: "http://127.0.0.1:9000/v1", vllm: "https://vllm.internal/v1" });
  });

  it("names a malformed override", () => {
    expect(() => providerBaseUrls({ ROUTER_PROVIDER_GROQ_BASE_URL: "not a url" })).toThrow(/ROUTER_PROVIDER_GROQ_BASE_URL/);
  });
});
