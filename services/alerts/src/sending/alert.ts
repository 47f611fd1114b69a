/** The events an alert channel receives (Events, in the service README). */
export type AlertEvent = "key_limit.threshold" | "agent_limit.threshold" | "spend.runaway" | "test";

/** One announcement, ready for any channel kind. Metadata only. */
export interface Alert {
  event: AlertEvent;
  orgId: string;
  /** The channel threshold announced (threshold events), else null. */
  threshold: number | null;
  keyName: string | null;
  /** The first 12 characters of the key hash, for a key's alert. */
  keyHashPrefix: string | null;
  /** The agent name, for an agent's alert. */
  agentTag: string | null;
  /** The webhook body's `data`. */
  data: Record<string, unknown>;
  /** One sentence for people: the chat message and the email subject and text. */
  summary: string;
}

/**
 * The webhook body: `id` is the delivery id (the same on every retry of one delivery, so a receiver
 * can drop repeats), `type` the event, `created_at` when it was sent, `organization_id`, and the
 * event's `data`.
 */
export function webhookBody(deliveryId: string, alert: Alert, at: Date): string {
  return JSON.stringify({
    id: deliveryId,
    type: alert.event,
    created_at: at.toISOString(),
    organization_id: alert.orgId,
    data: alert.data,
  });
}

/** The chat tool's incoming-webhook body: one line of text. */
export function chatBody(alert: Alert): string {
  return JSON.stringify({ text: `Router alert: ${alert.summary}` });
}
