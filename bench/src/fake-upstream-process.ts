import { startFakeAzureOpenAi, startFakeOpenAi } from "@router/testkit";
import { AZURE_BENCH_DEPLOYMENT, FAKE_PROVIDER_KEY } from "./bench-keys";

/**
 * The fake OpenAI-compatible provider in its own process, so the load generator and the server
 * under test never share an event loop with it. Prints `{"url": ...}` once listening.
 */
async function main(): Promise<void> {
  const defaultReply = { text: "The quick brown fox jumps over the lazy dog.", usage: { prompt: 20, completion: 10 } };
  const fake = await startFakeOpenAi({ defaultReply });
  // The same answers from an Azure OpenAI resource: the cloud row is read against the OpenAI one.
  const azure = await startFakeAzureOpenAi({ defaultReply, apiKeys: [FAKE_PROVIDER_KEY], deployments: { [AZURE_BENCH_DEPLOYMENT]: "gpt-4o-mini" } });
  // Recorded requests would grow without bound under load.
  setInterval(() => {
    fake.reset();
    azure.reset();
  }, 1000).unref();
  process.stdout.write(`${JSON.stringify({ url: fake.url, origin: fake.origin, azureUrl: azure.url })}\n`);
  process.on("SIGTERM", () => {
    Promise.all([fake.close(), azure.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`fake upstream failed to start: ${String(err)}\n`);
  process.exit(1);
});
