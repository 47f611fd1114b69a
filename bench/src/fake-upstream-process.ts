import { startFakeOpenAi } from "@router/testkit";

/**
 * The fake OpenAI-compatible provider in its own process, so the load generator and the server
 * under test never share an event loop with it. Prints `{"url": ...}` once listening.
 */
async function main(): Promise<void> {
  const fake = await startFakeOpenAi({ defaultReply: { text: "The quick brown fox jumps over the lazy dog.", usage: { prompt: 20, completion: 10 } } });
  // Recorded requests would grow without bound under load.
  setInterval(() => fake.reset(), 1000).unref();
  process.stdout.write(`${JSON.stringify({ url: fake.url, origin: fake.origin })}\n`);
  process.on("SIGTERM", () => {
    fake.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`fake upstream failed to start: ${String(err)}\n`);
  process.exit(1);
});
