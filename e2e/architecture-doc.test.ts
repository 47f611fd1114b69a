import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TOPICS } from "@router/proto";
import { TOPIC_TABLE } from "../libs/proto/test/asyncapi-document";

/**
 * docs/architecture.md against the code: its tables list every library folder, every service (a
 * folder of services/ with its own main, apart from the one-process runner and the CLI, which the
 * text names) and every topic with the services that consume it, and nothing else.
 */
const root = join(__dirname, "..");
const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");

/** The rows of the markdown table under `## <heading>` (or the first table after `marker`), as cells. */
function tableAfter(marker: string): string[][] {
  const start = doc.indexOf(marker);
  if (start < 0) throw new Error(`docs/architecture.md has no ${marker}`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of doc.slice(start).split("\n")) {
    if (line.startsWith("|")) {
      inTable = true;
      rows.push(line.split("|").slice(1, -1).map((c) => c.trim()));
    } else if (inTable) break;
  }
  // Header and separator rows go.
  return rows.slice(2);
}

const dirs = (path: string): string[] =>
  readdirSync(join(root, path), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();

const NOT_SERVICES = ["cli", "embedded"];

/** Consumers found in the code: a service whose source subscribes (`.subscribe(`) in a file naming `TOPICS.<topic>`. */
function consumersInCode(): Map<string, Set<string>> {
  const byTopic = new Map<string, Set<string>>();
  for (const service of dirs("services").filter((s) => !NOT_SERVICES.includes(s))) {
    const src = join(root, "services", service, "src");
    if (!existsSync(src)) continue;
    for (const file of readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))) {
      const code = readFileSync(join(src, file), "utf8");
      if (!code.includes(".subscribe(")) continue;
      for (const [, key] of code.matchAll(/TOPICS\.(\w+)/g)) {
        const topic = TOPICS[key as keyof typeof TOPICS];
        if (!byTopic.has(topic)) byTopic.set(topic, new Set());
        byTopic.get(topic)!.add(service);
      }
    }
  }
  return byTopic;
}

const bold = (cell: string): string[] => [...cell.matchAll(/\*\*([\w-]+)\*\*/g)].map((m) => m[1]!);

describe("docs/architecture.md", () => {
  test("lists every folder of libs/ in the library table, and no other", () => {
    const listed = tableAfter("## Libraries").map((row) => /^`libs\/([\w-]+)`$/.exec(row[0] ?? "")?.[1] ?? `unparsed: ${row[0]}`);
    expect(listed.sort()).toEqual(dirs("libs"));
  });

  test("lists every service with its own main in the services table, and names the CLI and the one-process runner in the text", () => {
    const services = dirs("services").filter((s) => !NOT_SERVICES.includes(s) && existsSync(join(root, "services", s, "src", "main.ts")));
    const rows = tableAfter("| service | entry |");
    expect(rows.map((row) => row[0]).sort()).toEqual(services);
    for (const row of rows) expect(row[1]).toBe(`\`services/${row[0]}/dist/main.js\``);
    for (const s of NOT_SERVICES) expect(doc).toContain(`\`services/${s}\``);
  });

  test("lists every topic with its producer and exactly the services whose code consumes it", () => {
    const rows = tableAfter("## Topics");
    const inCode = consumersInCode();
    expect(rows.map((row) => row[0]).sort()).toEqual(Object.values(TOPICS).map((t) => `\`${t}\``).sort());
    for (const [key, topic] of Object.entries(TOPICS)) {
      const row = rows.find((r) => r[0] === `\`${topic}\``)!;
      const entry = TOPIC_TABLE[key as keyof typeof TOPICS];
      expect([topic, bold(row[1] ?? "")[0]]).toEqual([topic, entry.producer]);
      const consumers = [...(inCode.get(topic) ?? [])].sort();
      expect([topic, bold(row[2] ?? "").sort()]).toEqual([topic, consumers]);
      // The AsyncAPI table (docs/asyncapi.yaml's source) agrees with the code too.
      expect([topic, entry.consumers.map((c) => c.service).sort()]).toEqual([topic, consumers]);
    }
    // The ledger settles spend from the completed-request record: the check must have seen it.
    expect(inCode.get(TOPICS.requestCompleted)).toContain("ledger");
  });

  test("shows every topic with exactly its consumers in the diagram", () => {
    const lines = (/```\n([\s\S]*?)```/.exec(doc)?.[1] ?? "").split("\n");
    for (const [topic, consumers] of consumersInCode()) {
      // A topic's arrows: its own line, then the branch lines (├▶, └▶) under it.
      const at = lines.findIndex((l) => l.includes(topic));
      expect([topic, at >= 0]).toEqual([topic, true]);
      const block = [lines[at]!];
      for (const l of lines.slice(at + 1)) {
        if (!/^\s*[├└]/.test(l) || Object.values(TOPICS).some((t) => l.includes(t))) break;
        block.push(l);
      }
      const shown = block.flatMap((l) => [...l.matchAll(/(?:bus ─▶|[├└]─*▶) ([\w-]+)/g)].map((m) => m[1]!));
      expect([topic, shown.sort()]).toEqual([topic, [...consumers].sort()]);
    }
  });
});
