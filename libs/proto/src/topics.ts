/**
 * The bus topics and what each carries (the payload message in `events`). Topic names are versioned
 * and are a contract with downstream teams: a new incompatible payload gets a new topic, never a
 * changed one. Consumer groups are named after the consuming service.
 */
export const TOPICS = {
  /** `events.RequestCompleted`, from the gateway; keyed by organisation id. */
  requestCompleted: "router.request.completed.v1",
  /** `events.ThresholdCrossed`, from the ledger; keyed by organisation id. */
  thresholdCrossed: "router.spend.threshold_crossed.v1",
  /** `events.RunawayFlagged`, from runaway; keyed by organisation id. */
  runawayFlagged: "router.spend.runaway_flagged.v1",
} as const;

export type Topic = (typeof TOPICS)[keyof typeof TOPICS];
