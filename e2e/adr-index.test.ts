import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * docs/adr: one decision per file, `NNNN-kebab-title.md`, each with its title and the three
 * sections, numbered without gaps, and every one listed once in docs/adr/README.md's index table
 * under its own number and title.
 */
const dir = join(__dirname, "..", "docs", "adr");
const records = readdirSync(dir)
  .filter((f) => f.endsWith(".md") && f !== "README.md")
  .sort();
const index = readFileSync(join(dir, "README.md"), "utf8");

/** The index rows: `| [NNNN](file) | title | area |`. */
const rows = [...index.matchAll(/^\| \[(\d{4})\]\(([^)]+)\) \| (.+?) \| (.+?) \|$/gm)].map((m) => ({
  number: m[1]!,
  file: m[2]!,
  title: m[3]!,
  area: m[4]!,
}));

const titleOf = (text: string): string | undefined => /^# (.+)\n/.exec(text)?.[1];

describe("docs/adr", () => {
  test("names every record NNNN-kebab-title.md, numbered from 0001 without gaps", () => {
    expect(records.length).toBeGreaterThan(0);
    for (const f of records) expect(f).toMatch(/^\d{4}-[a-z0-9]+(-[a-z0-9]+)*\.md$/);
    expect(records.map((f) => Number(f.slice(0, 4)))).toEqual(records.map((_, i) => i + 1));
  });

  test("gives every record its title and Context, Decision and Consequences, in that order, none empty", () => {
    for (const f of records) {
      const text = readFileSync(join(dir, f), "utf8");
      const headings = [...text.matchAll(/^(#{1,2}) (.+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
      expect([f, headings.filter((h) => h.startsWith("## "))]).toEqual([f, ["## Context", "## Decision", "## Consequences"]]);
      expect([f, text.startsWith("# ")]).toEqual([f, true]);
      for (const section of text.split(/^## .+$/m).slice(1)) expect([f, section.trim().length > 0]).toEqual([f, true]);
    }
  });

  test("lists every record in the index once, under its number and title, and nothing else", () => {
    expect(rows.map((r) => r.file)).toEqual(records);
    for (const r of rows) {
      expect([r.file, r.number]).toEqual([r.file, r.file.slice(0, 4)]);
      expect([r.file, r.title]).toEqual([r.file, titleOf(readFileSync(join(dir, r.file), "utf8"))]);
      expect([r.file, r.area.trim().length > 0]).toEqual([r.file, true]);
    }
  });
});
