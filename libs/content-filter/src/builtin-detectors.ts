import { isIP } from "node:net";

/** Detectors a guardrail may switch on by name in `content_filter_builtins`. */
export const BUILTIN_DETECTORS = ["email", "phone", "credit_card", "ssn", "ip_address", "api_key"] as const;
export type BuiltinDetector = (typeof BUILTIN_DETECTORS)[number];

export function isBuiltinDetector(name: string): name is BuiltinDetector {
  return (BUILTIN_DETECTORS as readonly string[]).includes(name);
}

/** A detector: a global pattern that finds candidates, and a check that confirms each one. */
export interface Detector {
  label: string;
  pattern: { exec(text: string): RegExpExecArray | null; lastIndex: number };
  confirms?: (match: string) => boolean;
  /** A substring every match contains: a text without it is not scanned at all. */
  requires?: string;
}

/** Luhn checksum over the digits of a candidate card number (13 to 19 digits). */
function luhn(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

// Our own patterns, reviewed for linear behaviour (no nested quantifiers), so V8's engine is safe
// here; organisations' own patterns go through RE2 instead (content-filter.ts).
const SOURCES: Record<BuiltinDetector, { source: string; confirms?: (m: string) => boolean; requires?: string }> = {
  email: { source: String.raw`[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}`, requires: "@" },
  // North American and international forms: +44 20 7946 0958, (415) 555-0132, 415.555.0132.
  phone: {
    source: String.raw`(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])\d{3,4}[ .-]\d{3,4}(?![\w])|(?<![\w+])\+\d{8,15}(?!\w)`,
  },
  credit_card: { source: String.raw`(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)`, confirms: luhn },
  ssn: { source: String.raw`(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)` },
  ip_address: {
    // IPv6 candidates start after a non-word character, so words are rejected at their first letter.
    source: String.raw`(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])|(?<![\w:])(?:[0-9A-Fa-f]{1,4}|:)(?::[0-9A-Fa-f]{0,4}){1,7}(?![\w:])`,
    confirms: (m) => isIP(m) !== 0,
  },
  // Secret formats with a recognisable prefix: OpenAI, Anthropic, Router, AWS, GitHub, GitLab,
  // Slack, Google, Stripe.
  api_key: {
    source: String.raw`\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|rt-(?:v1|mgmt)-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|(?:sk|rk)_live_[A-Za-z0-9]{16,})`,
  },
};

/** A fresh detector per use: global patterns carry `lastIndex`, so they are not shared. */
export function builtinDetector(name: BuiltinDetector): Detector {
  const { source, confirms, requires } = SOURCES[name];
  return { label: name, pattern: new RegExp(source, "g"), confirms, requires };
}
