/** The provider key the benches register and send straight to the fake upstream (which takes any). */
export const FAKE_PROVIDER_KEY = "sk-bench-000000000000";

/** The fake Azure OpenAI resource's deployment of gpt-4o-mini. */
export const AZURE_BENCH_DEPLOYMENT = "bench-mini";
