import { ContentVerdict, FilterSet, patternProblem, type FilterSetDefinition } from "../src";

const set = (def: Partial<FilterSetDefinition>) => FilterSet.compile({ builtins: [], rules: [], allowlist: [], ...def });
const scan = (sets: FilterSet[], text: string) => {
  const verdict = new ContentVerdict(sets);
  const out = verdict.filter(text);
  return { out, verdict };
};

describe("builtin detectors", () => {
  test.each([
    ["email", "write to jane.doe+ops@example.co.uk today", true],
    ["email", "no address here @ all", false],
    ["phone", "call (415) 555-0132 now", true],
    ["phone", "call +44 20 7946 0958", true],
    ["phone", "call +14155550132", true],
    ["phone", "version 1.2.3 build", false],
    ["credit_card", "card 4111 1111 1111 1111 exp", true],
    ["credit_card", "card 4111-1111-1111-1111", true],
    ["credit_card", "order 4111 1111 1111 1112 (fails Luhn)", false],
    ["ssn", "ssn 123-45-6789", true],
    ["ssn", "ssn 000-45-6789", false],
    ["ip_address", "host 192.168.10.4 is up", true],
    ["ip_address", "host 2001:db8::8a2e:370:7334 is up", true],
    ["ip_address", "version 999.1.1.1 is not an address", false],
    ["ip_address", "loopback ::1 answers", true],
    ["ip_address", "meet at 10:30 today", false],
    ["api_key", "use sk-proj-abcdefghijklmnopqrstuvwx please", true],
    ["api_key", "aws AKIAIOSFODNN7EXAMPLE", true],
    ["api_key", "router rt-v1-AbCdEfGhIjKlMnOpQrSt", true],
    ["api_key", "a sketch of sk-short", false],
  ])("%s on %j matches: %s", (name, text, matches) => {
    const { verdict } = scan([set({ builtins: [name] })], text);
    expect(verdict.blocked).toBe(matches);
    expect([...verdict.labels]).toEqual(matches ? [name] : []);
  });
});

describe("actions", () => {
  test("redact rewrites only the matched spans, and keeps the rest byte for byte", () => {
    const { out, verdict } = scan([set({ rules: [{ name: "ticket", pattern: "TCK-\\d+", action: "redact" }] })], "see TCK-42 and TCK-7.");
    expect(out).toBe("see [REDACTED:ticket] and [REDACTED:ticket].");
    expect(verdict.blocked).toBe(false);
    expect([...verdict.redacted]).toEqual(["ticket"]);
  });

  test("overlapping redactions are merged into one", () => {
    const { out } = scan(
      [set({ rules: [{ name: "a", pattern: "abc", action: "redact" }, { name: "b", pattern: "bcd", action: "redact" }] })],
      "xabcdx",
    );
    expect(out).toBe("x[REDACTED:a]x");
  });

  test("flag records the label and changes nothing", () => {
    const { out, verdict } = scan([set({ rules: [{ name: "competitor", pattern: "(?i)acme", action: "flag" }] })], "Compare with ACME");
    expect(out).toBe("Compare with ACME");
    expect([...verdict.flagged]).toEqual(["competitor"]);
    expect(verdict.blocked).toBe(false);
  });

  test("of many rules only the matching ones act, each on its own matches", () => {
    const rules = Array.from({ length: 20 }, (_, i) => ({ name: `r${i}`, pattern: `word${i}\\b`, action: "redact" as const }));
    const { out, verdict } = scan([set({ rules })], "word3 and word17, not word170");
    expect(out).toBe("[REDACTED:r3] and [REDACTED:r17], not word170");
    expect([...verdict.redacted].sort()).toEqual(["r17", "r3"]);
  });

  test("a rule without a name is labelled custom", () => {
    const { verdict } = scan([set({ rules: [{ pattern: "secret", action: "block" }] })], "the secret word");
    expect([...verdict.blocking]).toEqual(["custom"]);
  });

  test("the same text is returned untouched when nothing matches", () => {
    const text = "nothing to see";
    expect(scan([set({ builtins: ["email"] })], text).out).toBe(text);
  });
});

describe("allowlist", () => {
  test("a match inside an allowlisted phrase is ignored, case-insensitively; others still count", () => {
    const guard = set({ builtins: ["email"], allowlist: ["Support@Example.com"] });
    expect(scan([guard], "mail support@example.com").verdict.blocked).toBe(false);
    expect(scan([guard], "mail support@example.com or bob@example.com").verdict.blocked).toBe(true);
  });

  test("one guardrail's allowlist does not loosen another guardrail's filters", () => {
    const loose = set({ builtins: ["email"], allowlist: ["bob@example.com"] });
    const strict = set({ builtins: ["email"] });
    expect(scan([loose, strict], "bob@example.com").verdict.blocked).toBe(true);
  });
});

describe("patterns", () => {
  test("RE2 refuses what could take exponential time, and the reason says so", () => {
    expect(patternProblem("(a+)+$")).toBeNull(); // RE2 runs this in linear time
    expect(patternProblem("(?=x)y")).toMatch(/lookaround/);
    expect(patternProblem("(a)\\1")).toMatch(/RE2/);
    expect(patternProblem("[unclosed")).toMatch(/RE2/);
  });

  test("a catastrophic pattern for backtracking engines runs in linear time", () => {
    const guard = set({ rules: [{ name: "evil", pattern: "(a+)+$", action: "block" }] });
    const text = `${"a".repeat(50_000)}!`;
    const started = process.hrtime.bigint();
    expect(scan([guard], text).verdict.blocked).toBe(false);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1_000);
  });

  test("matches are found in text with characters outside the basic plane", () => {
    const { out } = scan([set({ rules: [{ name: "x", pattern: "código", action: "redact" }] })], "😀 el código 😀");
    expect(out).toBe("😀 el [REDACTED:x] 😀");
  });
});
