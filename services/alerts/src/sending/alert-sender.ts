import { randomBytes } from "node:crypto";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { DeliveryOutcome, Outbound } from "@router/outbound";
import type { ChannelRecord } from "../channels/channel-store";
import type { SigningSecrets } from "../channels/signing-secrets";
import { insertDelivery } from "../deliveries/delivery-store";
import type { AlertsMetrics } from "../metrics";
import { chatBody, webhookBody, type Alert } from "./alert";
import type { EmailSender } from "./email";

export interface AlertSenderDeps {
  db: Db;
  outbound: Outbound;
  /** Null when the deployment has no mail server: email channels are then `skipped`. */
  email: EmailSender | null;
  secrets: SigningSecrets;
  clock: Clock;
  log: Logger;
  metrics: AlertsMetrics;
}

export const newDeliveryId = (): string => `dlv_${randomBytes(16).toString("hex")}`;

/**
 * Sends alerts to channels and records every attempt in the delivery log. Consumers `dispatch`
 * (returns at once; the outbound queue bounds the work), the test route `send`s and waits.
 */
export class AlertSender {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: AlertSenderDeps) {}

  /** Sends in the background; the outcome is recorded when it ends. */
  dispatch(channel: ChannelRecord, alert: Alert): void {
    const p = this.send(channel, alert).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Sends, records the attempt and resolves with its outcome. Never rejects. */
  async send(channel: ChannelRecord, alert: Alert): Promise<DeliveryOutcome> {
    const id = newDeliveryId();
    const outcome = await this.deliver(id, channel, alert).catch((err: unknown): DeliveryOutcome => {
      this.deps.log.error({ err, channelId: channel.id }, "alerts.delivery.failed_unexpectedly");
      return { status: "failed", httpStatus: null, error: "the alert could not be sent", attempts: 0, durationMs: 0 };
    });
    try {
      await insertDelivery(this.deps.db, {
        id,
        orgId: channel.orgId,
        channelId: channel.id,
        channelName: channel.name,
        channelKind: channel.kind,
        event: alert.event,
        threshold: alert.threshold,
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        error: outcome.error,
        keyName: alert.keyName,
        keyHashPrefix: alert.keyHashPrefix,
        agentTag: alert.agentTag,
        attempts: outcome.attempts,
        durationMs: outcome.durationMs,
        createdAt: this.deps.clock.now(),
      });
    } catch (err) {
      // The channel may have been removed meanwhile (its foreign key); the outcome stands.
      this.deps.log.error({ err, channelId: channel.id, deliveryId: id, status: outcome.status }, "alerts.delivery.record_failed");
    }
    this.deps.metrics.delivered(alert.event, outcome.status);
    this.deps.log.info(
      { deliveryId: id, channelId: channel.id, kind: channel.kind, event: alert.event, status: outcome.status, httpStatus: outcome.httpStatus },
      "alerts.delivery.recorded",
    );
    return outcome;
  }

  /** Resolves once every dispatched delivery has been recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async deliver(id: string, channel: ChannelRecord, alert: Alert): Promise<DeliveryOutcome> {
    switch (channel.kind) {
      case "webhook": {
        const signingSecret = channel.signingSecretSealed === null ? undefined : this.deps.secrets.open(channel.orgId, channel.id, channel.signingSecretSealed);
        return this.deps.outbound.deliver({ url: channel.target, body: webhookBody(id, alert, this.deps.clock.now()), signingSecret });
      }
      case "chat":
        return this.deps.outbound.deliver({ url: channel.target, body: chatBody(alert) });
      case "email":
        if (this.deps.email === null) {
          return { status: "skipped", httpStatus: null, error: "email is not available on this deployment", attempts: 0, durationMs: 0 };
        }
        return this.deps.email.send(channel.target, `Router alert: ${alert.summary}`, `${alert.summary}\n\n${JSON.stringify(alert.data, null, 2)}\n`);
    }
  }
}
