import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { AlertsMetrics } from "../metrics";
import type { AlertSender } from "../sending/alert-sender";

/** The consumer group of every alerts subscription (named after the service). */
export const CONSUMER_GROUP = "alerts";

export interface ConsumerDeps {
  db: Db;
  sender: AlertSender;
  clock: Clock;
  log: Logger;
  metrics: AlertsMetrics;
}
