import { randomBytes } from "node:crypto";
import { events } from "@router/proto";

/** A key crossing 85% of a 10 USD monthly hard ceiling; tests override what they are about. */
export function thresholdCrossedEvent(overrides: Partial<events.ThresholdCrossed>): events.ThresholdCrossed {
  return events.ThresholdCrossed.fromPartial({
    crossingId: `cross_${randomBytes(6).toString("hex")}`,
    subjectKind: "key",
    subject: "c".repeat(64),
    keyName: "prod key",
    window: "monthly",
    windowStartMs: BigInt(Date.parse("2026-11-01T00:00:00.000Z")),
    previousPercent: 0,
    percent: 85,
    mode: "hard",
    limitNanodollars: 10_000_000_000n,
    usageNanodollars: 8_500_000_000n,
    requestId: "gen-abc",
    crossedAtMs: BigInt(Date.parse("2026-11-21T09:59:00.000Z")),
    ...overrides,
  });
}

/** A key flagged for spending 12 USD in 15 minutes against a usual 3 USD. */
export function runawayFlaggedEvent(overrides: Partial<events.RunawayFlagged>): events.RunawayFlagged {
  return events.RunawayFlagged.fromPartial({
    flagId: `flag_${randomBytes(6).toString("hex")}`,
    subjectKind: "key",
    subject: "d".repeat(12),
    keyHash: "d".repeat(64),
    keyName: "batch key",
    action: "alert",
    kind: "spend",
    windowStartMs: BigInt(Date.parse("2026-11-21T09:45:00.000Z")),
    windowEndMs: BigInt(Date.parse("2026-11-21T10:00:00.000Z")),
    spendNanodollars: 12_000_000_000n,
    usualSpendNanodollars: 3_000_000_000n,
    requests: 40n,
    usualRequests: 10.5,
    createdAtMs: BigInt(Date.parse("2026-11-21T10:00:00.000Z")),
    ...overrides,
  });
}
