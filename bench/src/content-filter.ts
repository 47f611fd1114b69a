import { BUILTIN_DETECTORS, ContentVerdict, FilterSet } from "@router/content-filter";

/**
 * The gateway's content-filter cost per request, in process: one guardrail with every builtin
 * detector and 20 patterns of its own (RE2), over a conversation of about 2 KB that nothing in
 * it matches (every detector scans everything: the costliest pass), and over one that a redacting
 * pattern rewrites.
 */
const RUNS = 20_000;

const guardrail = FilterSet.compile({
  builtins: [...BUILTIN_DETECTORS],
  rules: Array.from({ length: 20 }, (_, i) => ({ name: `rule-${i}`, pattern: `(?i)codename-${i}\\b`, action: i === 0 ? ("redact" as const) : ("block" as const) })),
  allowlist: ["support@example.com"],
});

const sentence = "The quarterly report covers revenue, churn and the roadmap for the next two releases. ";
const clean = Array.from({ length: 6 }, (_, i) => `${i % 2 ? "assistant" : "user"}: ${sentence.repeat(4)}`);
const redacting = [...clean.slice(0, 5), `user: please rename codename-0 before the review. ${sentence}`];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

function measure(name: string, texts: string[]): void {
  const run = () => {
    const verdict = new ContentVerdict([guardrail]);
    for (const t of texts) verdict.filter(t);
    return verdict;
  };
  for (let i = 0; i < 2_000; i++) run(); // warm the JIT
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    run();
    times.push((performance.now() - t0) * 1000);
  }
  times.sort((a, b) => a - b);
  const us = (p: number) => percentile(times, p).toFixed(1).padStart(7);
  const bytes = texts.reduce((n, t) => n + t.length, 0);
  process.stdout.write(`  ${name.padEnd(28)} ${String(bytes).padStart(5)} chars   p50 ${us(0.5)} µs   p90 ${us(0.9)} µs   p99 ${us(0.99)} µs\n`);
}

process.stdout.write(`Content filters in process: 6 builtins + 20 RE2 patterns, ${RUNS} requests per case\n`);
measure("nothing matches", clean);
measure("one redaction", redacting);
