import { createHash, timingSafeEqual } from "node:crypto";
import type { Db } from "@router/db";
import { DomainError, invalid } from "@router/errors";
import type { Clock } from "@router/money";
import { Router, type RequestHandler } from "express";
import { z } from "zod";
import { objectBody } from "../json-body";
import { recordProbe, utcDay } from "./uptime-store";

/**
 * How old a reported probe may be: the probe keeps the results it could not deliver (the gateway it
 * measures was down, which is when they matter most) and sends them, with their time, once it answers.
 */
export const PROBE_REPORT_MAX_AGE_MS = 7 * 24 * 3_600_000;
/** A probe's clock may run a little ahead of the gateway's. */
const PROBE_REPORT_MAX_AHEAD_MS = 60_000;

/** What `router probe` reports: where it probed from, whether /health answered ok, and when (default: now). */
export const probeReportSchema = z.object({
  region: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "lower-case letters, digits and dashes (at most 40), e.g. eu-west"),
  up: z.boolean(),
  at: z.iso.datetime({ offset: true }).optional(),
});

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** The bearer token of a request, or null. */
function bearerOf(header: string | undefined): string | null {
  const m = /^Bearer ([^\s]+)$/i.exec(header ?? "");
  return m?.[1] ?? null;
}

/**
 * `POST /v1/status/probes`: one probe result from `router probe`, counted for `GET /v1/status/uptime`
 * on the UTC day of its `at` (default the gateway's now). Authenticated by ROUTER_PROBE_TOKEN, which only the probes hold (so a
 * probe needs no database credential); without it configured, every report is refused.
 */
export function probeRoute(deps: { db: Db; clock: Clock; probeToken: string | undefined; publicLimit: RequestHandler }): Router {
  const expected = deps.probeToken === undefined ? null : digest(deps.probeToken);
  const router = Router();
  router.post("/v1/status/probes", deps.publicLimit, async (req, res) => {
    const given = bearerOf(req.headers.authorization);
    // Digests first: equal lengths for timingSafeEqual, and the comparison leaks nothing of the token.
    if (expected === null || given === null || !timingSafeEqual(digest(given), expected)) {
      throw new DomainError("unauthorized", expected === null ? "probe reports are off: the gateway has no ROUTER_PROBE_TOKEN" : "a probe token is required (Authorization: Bearer <ROUTER_PROBE_TOKEN>)");
    }
    const parsed = probeReportSchema.safeParse(objectBody(req, ["region", "up", "at"]));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(String(issue?.path[0] ?? "body"), issue?.message ?? "invalid");
    }
    const now = deps.clock.now();
    const at = parsed.data.at === undefined ? now : new Date(parsed.data.at);
    const ageMs = now.getTime() - at.getTime();
    if (ageMs > PROBE_REPORT_MAX_AGE_MS || ageMs < -PROBE_REPORT_MAX_AHEAD_MS) {
      throw invalid("at", "must be within the last 7 days (and not over a minute ahead of the gateway's clock)");
    }
    await recordProbe(deps.db, { region: parsed.data.region, at, up: parsed.data.up });
    res.status(201).json({ data: { region: parsed.data.region, day: utcDay(at), up: parsed.data.up } });
  });
  return router;
}
