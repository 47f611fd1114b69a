import type { EventBus } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { candidateWindows, pruneBuckets, type SubjectWindowRow } from "../buckets/bucket-store";
import { publishFlag } from "../flags/flag-events";
import { claimUnpublished, FLAG_RETENTION_MS, markPublished, pruneFlags, raiseFlag, releaseClaim, type Flag } from "../flags/flag-store";
import type { RunawayMetrics } from "../metrics";
import {
  BUCKET_RETENTION_MS,
  flaggedBefore,
  runawayKind,
  sweepWindow,
  usualRequestsPerWindow,
  usualSpendPerWindow,
  type RuleFloors,
  type SweepWindow,
} from "./runaway-rule";

/** How long a sweeper may take to publish a flag before another sweeper sends it instead. */
const PUBLISH_CLAIM_MS = 60_000;
/** Unpublished flags resent per sweep, at most. */
const REPUBLISH_BATCH = 100;

export interface SweepDeps {
  db: Db;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  floors: RuleFloors;
  metrics?: RunawayMetrics;
}

export interface SweepReport {
  /** Flags this sweep raised. */
  flagged: Flag[];
  /** Flags of earlier sweeps whose events this sweep sent. */
  republished: number;
}

/**
 * One sweep at the clock's current time: first the events of flags stored earlier but never
 * published, then every subject whose last 15 minutes break the rule is flagged (at most once an
 * hour; several sweepers share the work through the store), each new flag published, and buckets and
 * flags past their retention dropped.
 */
export async function sweep(deps: SweepDeps): Promise<SweepReport> {
  const now = deps.clock.now();
  const republished = await republishPending(deps, now);
  const window = sweepWindow(now);
  const candidates = await candidateWindows(
    deps.db,
    { windowStart: window.start, windowEnd: window.end, usualFrom: window.usualFrom },
    deps.floors,
  );
  const flagged: Flag[] = [];
  for (const candidate of candidates) {
    const flag = await flagIfRunaway(deps, candidate, window, now);
    if (flag) flagged.push(flag);
  }
  for (const flag of flagged) await send(deps, flag, now);
  await pruneBuckets(deps.db, new Date(now.getTime() - BUCKET_RETENTION_MS));
  await pruneFlags(deps.db, new Date(now.getTime() - FLAG_RETENTION_MS), flaggedBefore(now));
  return { flagged, republished };
}

async function flagIfRunaway(deps: SweepDeps, c: SubjectWindowRow, window: SweepWindow, now: Date): Promise<Flag | null> {
  const kind = runawayKind(c, deps.floors);
  if (!kind) return null;
  const flag = await raiseFlag(
    deps.db,
    {
      orgId: c.orgId,
      subjectKind: c.subjectKind,
      subjectId: c.subject,
      keyHash: c.subjectKind === "key" ? c.subject : null,
      keyName: c.subjectKind === "key" ? c.keyName : null,
      kind,
      windowStart: window.start,
      windowEnd: window.end,
      spendNanos: c.spendNanos,
      usualSpendNanos: usualSpendPerWindow(c.usualSpanSpendNanos),
      requests: c.requests,
      usualRequests: usualRequestsPerWindow(c.usualSpanRequests),
    },
    { now, flaggedBefore: flaggedBefore(now), claimUntil: new Date(now.getTime() + PUBLISH_CLAIM_MS) },
  );
  if (!flag) return null;
  deps.metrics?.flagged(flag);
  deps.log.info(
    { flagId: flag.id, orgId: flag.orgId, subjectKind: flag.subjectKind, subject: flag.subject, kind, action: flag.action },
    "runaway.flag.raised",
  );
  return flag;
}

async function republishPending(deps: SweepDeps, now: Date): Promise<number> {
  const pending = await claimUnpublished(deps.db, now, new Date(now.getTime() + PUBLISH_CLAIM_MS), REPUBLISH_BATCH);
  let sent = 0;
  for (const flag of pending) if (await send(deps, flag, now)) sent++;
  return sent;
}

/**
 * Publishes a flag and records that it went. A publish that fails leaves the flag unpublished and
 * unclaimed, so the next sweep (here or on another replica) sends it.
 */
async function send(deps: SweepDeps, flag: Flag, now: Date): Promise<boolean> {
  try {
    await publishFlag(deps.bus, flag);
  } catch (err) {
    deps.metrics?.published("failed");
    deps.log.warn({ err, flagId: flag.id, orgId: flag.orgId }, "runaway.flag.publish_failed");
    await releaseClaim(deps.db, flag.id);
    return false;
  }
  deps.metrics?.published("published");
  await markPublished(deps.db, flag.id, now);
  return true;
}

/**
 * Runs a sweep every `intervalMs`, each at the next multiple of the interval since the epoch (on the
 * 5-minute boundaries by default, so each window is exactly the last 15 minutes). A sweep never
 * overlaps the previous one; a failed sweep is logged and counted, and the next one tries again.
 */
export class SweepSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly deps: SweepDeps,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.scheduleNext();
  }

  /** Runs one sweep now (the timer's sweeps and these never overlap). */
  sweepNow(): Promise<SweepReport> {
    const next = this.running.then(() => this.timed());
    this.running = next.catch(() => undefined);
    return next;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    const delay = this.intervalMs - (this.deps.clock.now().getTime() % this.intervalMs);
    this.timer = setTimeout(() => {
      // A failed sweep was logged and counted in `timed`; the schedule goes on regardless.
      void this.sweepNow()
        .catch(() => undefined)
        .finally(() => this.scheduleNext());
    }, delay);
    this.timer.unref();
  }

  private async timed(): Promise<SweepReport> {
    const started = performance.now();
    try {
      const report = await sweep(this.deps);
      this.deps.metrics?.swept("ok", (performance.now() - started) / 1000);
      return report;
    } catch (err) {
      this.deps.metrics?.swept("failed", (performance.now() - started) / 1000);
      this.deps.log.error({ err }, "runaway.sweep.failed");
      throw err;
    }
  }
}
