import { EmbeddedPostgres } from "@router/db";

/**
 * The embedded database's own resident memory: this process opens the data directory the way the
 * one-process default does (same settings), reads once, settles and prints its VmRSS in MB. The
 * one-process default's memory target is read against this floor.
 */
async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error("usage: pglite-floor <data directory>");
  const pg = await EmbeddedPostgres.open(dataDir);
  await pg.forSchema("public").query("SELECT 1");
  await new Promise((r) => setTimeout(r, 2000));
  process.stdout.write(`${Math.round(process.memoryUsage().rss / 1048576)}\n`);
  await pg.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
