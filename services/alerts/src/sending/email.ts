import type * as Nodemailer from "nodemailer";
import type { Transporter } from "nodemailer";
import type { DeliveryOutcome } from "@router/outbound";
import type { Clock } from "@router/money";

/** Sends alert email through the deployment's SMTP server. */
export interface EmailSender {
  send(to: string, subject: string, text: string): Promise<DeliveryOutcome>;
  close(): void;
}

/** Mail through `smtpUrl` (nodemailer, pooled, each step bounded by `timeoutMs`); one attempt per alert. */
export function smtpEmailSender(opts: { smtpUrl: string; from: string; timeoutMs: number; clock: Clock }): EmailSender {
  // Loaded only where email is configured: most deployments send alerts by webhook.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createTransport } = require("nodemailer") as typeof Nodemailer;
  const transport: Transporter = createTransport(
    {
      url: opts.smtpUrl,
      pool: true,
      maxConnections: 2,
      connectionTimeout: opts.timeoutMs,
      greetingTimeout: opts.timeoutMs,
      socketTimeout: opts.timeoutMs,
    },
    { from: opts.from },
  );
  return {
    async send(to, subject, text) {
      const started = opts.clock.now().getTime();
      const durationMs = () => Math.max(0, opts.clock.now().getTime() - started);
      try {
        await transport.sendMail({ to, subject, text });
        return { status: "sent", httpStatus: null, error: null, attempts: 1, durationMs: durationMs() };
      } catch (err) {
        return { status: "failed", httpStatus: null, error: mailFailure(err), attempts: 1, durationMs: durationMs() };
      }
    },
    close() {
      transport.close();
    },
  };
}

/** In our own words: the SMTP reply code or the connection error code, never the server's text. */
function mailFailure(err: unknown): string {
  const e = err as { responseCode?: unknown; code?: unknown };
  if (typeof e.responseCode === "number") return `the mail server did not accept the message (SMTP ${e.responseCode})`;
  if (typeof e.code === "string") return `the mail server could not be reached (${e.code})`;
  return "the mail server could not be reached";
}
