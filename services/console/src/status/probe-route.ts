import { createHash, timingSafeEqual } from "node:crypto";
import type { Db } from "@router/db";
import { DomainError, invalid } from "@router/errors";
import type { Clock } from "@router/money";
import { parseInput } from "@router/http-kit";
import { console as consoleApi } from "@router/management-api";
import { Router } from "express";
import type { ProbeReportResult } from "../metrics";
import { recordProbe, utcDay } from "./uptime-store";

/**
 * How old a reported probe may be: the probe keeps the results it could not deliver (the gateway it
 * measures was down, which is when they matter most) and sends them, with their time, once it answers.
 */
export const PROBE_REPORT_MAX_AGE_MS = 7 * 24 * 3_600_000;
/** A probe's clock may run a little ahead of the gateway's. */
const PROBE_REPORT_MAX_AHEAD_MS = 60_000;


const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** The bearer token of a request, or null. */
function bearerOf(header: string | undefined): string | null {
  const m = /^Bearer ([^\s]+)$/i.exec(header ?? "");
  return m?.[1] ?? null;
}

/**
 * `POST /v1/status/probes`: one probe result from `router probe`, counted for `GET /v1/status/uptime`
 * on the UTC day of its `at` (default now). Authenticated by ROUTER_PROBE_TOKEN, which only the probes hold (so a
 * probe needs no database credential); without it configured, every report is refused.
 */
export function probeRoute(deps: { db: Db; clock: Clock; probeToken: string | undefined; onReport?: (result: ProbeReportResult) => void }): Router {
  const expected = deps.probeToken === undefined ? null : digest(deps.probeToken);
  const router = Router();
  router.post("/v1/status/probes", async (req, res) => {
    const given = bearerOf(req.headers.authorization);
    // Digests first: equal lengths for timingSafeEqual, and the comparison leaks nothing of the token.
    if (expected === null || given === null || !timingSafeEqual(digest(given), expected)) {
      deps.onReport?.("refused");
      throw new DomainError("unauthorized", expected === null ? "probe reports are off: this deployment has no ROUTER_PROBE_TOKEN" : "a probe token is required (Authorization: Bearer <ROUTER_PROBE_TOKEN>)");
    }
    let report;
    try {
      report = parseInput(consoleApi.probeReport, req.body ?? {});
    } catch (err) {
      deps.onReport?.("refused");
      throw err;
    }
    const now = deps.clock.now();
    const at = report.at === undefined ? now : new Date(report.at);
    const ageMs = now.getTime() - at.getTime();
    if (ageMs > PROBE_REPORT_MAX_AGE_MS || ageMs < -PROBE_REPORT_MAX_AHEAD_MS) {
      deps.onReport?.("refused");
      throw invalid("at", "must be within the last 7 days (and not over a minute ahead of this deployment's clock)");
    }
    await recordProbe(deps.db, { region: report.region, at, up: report.up });
    deps.onReport?.("counted");
    res.status(201).json({ data: { region: report.region, day: utcDay(at), up: report.up } });
  });
  return router;
}
