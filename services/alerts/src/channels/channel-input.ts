import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { alerts } from "@router/management-api";
import { checkTargetUrl, type AllowedHosts } from "@router/outbound";
import { z } from "zod";
import type { ChannelKind } from "./channel-store";

export const DEFAULT_THRESHOLDS = [50, 80, 100];

const addChannelBody = alerts.addChannelBody;

const emailAddress = z.email().max(254);

/** What a deployment lets a channel be. */
export interface ChannelRules {
  /** `chat` targets must be https URLs on this host (an incoming webhook). */
  chatHookHost: string;
  /** Whether email can be sent (an SMTP server is configured). */
  emailAvailable: boolean;
  /** Test-only hosts let through on any port (`ROUTER_OUTBOUND_ALLOW_HOSTS`). */
  allowedHosts: AllowedHosts;
}

export interface NewChannel {
  kind: ChannelKind;
  target: string;
  name: string | null;
  thresholds: number[];
}

/** Validates an add-channel body; a 400 naming the field when it cannot be one. */
export function parseNewChannel(body: unknown, rules: ChannelRules): NewChannel {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  const input = parseInput(addChannelBody, body);
  const target = checkedTarget(input.kind, input.target, rules);
  const thresholds = [...new Set(input.thresholds ?? DEFAULT_THRESHOLDS)].sort((a, b) => a - b);
  return { kind: input.kind, target, name: input.name ?? null, thresholds };
}

function checkedTarget(kind: ChannelKind, target: string, rules: ChannelRules): string {
  if (kind === "email") {
    if (!rules.emailAvailable) throw invalid("kind", "email is not available on this deployment (no mail server is configured)");
    if (!emailAddress.safeParse(target).success) throw invalid("target", "must be an email address");
    return target.toLowerCase();
  }
  const url = checkTargetUrl(target, "target", rules.allowedHosts);
  if (kind === "chat" && (url.hostname.toLowerCase() !== rules.chatHookHost || url.pathname === "/")) {
    throw invalid("target", `must be an incoming-webhook URL on ${rules.chatHookHost}`);
  }
  return url.toString();
}
