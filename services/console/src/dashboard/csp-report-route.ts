import { invalid } from "@router/errors";
import { jsonDepthError } from "@router/http-kit";
import type { Logger } from "@router/logging";
import express, { Router } from "express";
import { z } from "zod";

/** Where the dashboard's pages report violations; the gateway forwards it here with its own body. */
export const CSP_REPORT_PATH = "/csp-report";
export const CSP_REPORT_TYPES = ["application/csp-report", "application/reports+json"];
const MAX_VIOLATIONS = 10;
const MAX_FIELD = 200;
/** Browsers send a few kilobytes; anything much larger is not a report. */
const MAX_BODY = "64kb";

const text = z.string().optional().catch(undefined);
// The legacy `report-uri` form: one violation under "csp-report", hyphenated names.
const legacyReport = z.object({
  "csp-report": z.object({
    "document-uri": text,
    "effective-directive": text,
    "violated-directive": text,
    "blocked-uri": text,
    "source-file": text,
  }),
});
// The Reporting API form: an array of reports; only CSP violations are read.
const reportingApiReports = z.array(
  z.object({
    type: z.string(),
    body: z
      .object({ documentURL: text, effectiveDirective: text, blockedURL: text, sourceFile: text })
      .catch({ documentURL: undefined, effectiveDirective: undefined, blockedURL: undefined, sourceFile: undefined }),
  }),
);

interface Violation {
  document: string | null;
  directive: string | null;
  blocked: string | null;
  source: string | null;
}

const clip = (s: string | undefined): string | null => (s === undefined ? null : s.slice(0, MAX_FIELD));

function violationsOf(body: unknown): Violation[] {
  const legacy = legacyReport.safeParse(body);
  if (legacy.success) {
    const r = legacy.data["csp-report"];
    return [
      {
        document: clip(r["document-uri"]),
        directive: clip(r["effective-directive"] ?? r["violated-directive"]),
        blocked: clip(r["blocked-uri"]),
        source: clip(r["source-file"]),
      },
    ];
  }
  const reports = reportingApiReports.safeParse(body);
  if (!reports.success) throw invalid("body", "expected a CSP report (application/csp-report) or a list of reports (application/reports+json)");
  return reports.data
    .filter((r) => r.type === "csp-violation")
    .map((r) => ({
      document: clip(r.body.documentURL),
      directive: clip(r.body.effectiveDirective),
      blocked: clip(r.body.blockedURL),
      source: clip(r.body.sourceFile),
    }));
}

/**
 * `POST /csp-report` (public): browsers' Content-Security-Policy violation reports, in either
 * format. The first ten violations are logged with four fields clipped to 200 characters; nothing
 * is stored and nothing is echoed (the answer is an empty 204). The gateway limits it per address.
 */
export function cspReportRoute(deps: { log: Logger; onViolations?: (count: number) => void }): Router {
  const router = Router();
  router.post(CSP_REPORT_PATH, express.text({ type: CSP_REPORT_TYPES, limit: MAX_BODY }), (req, res) => {
    if (!req.is(CSP_REPORT_TYPES)) throw invalid("content-type", `expected one of ${CSP_REPORT_TYPES.join(", ")}`);
    let parsed: unknown = req.body;
    if (typeof parsed === "string") {
      try {
        parsed = JSON.parse(parsed);
      } catch {
        throw invalid("body", "is not JSON");
      }
      // The app's parser checked the depth of a JSON body; this one arrived as text.
      const tooDeep = jsonDepthError(parsed);
      if (tooDeep) throw tooDeep;
    }
    const violations = violationsOf(parsed);
    const logged = violations.slice(0, MAX_VIOLATIONS);
    for (const v of logged) deps.log.warn({ csp: v }, "console.csp.violation");
    deps.onViolations?.(logged.length);
    res.status(204).end();
  });
  return router;
}
