import { randomBytes } from "node:crypto";
import { Router, type Request } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { identityOf } from "@router/http-kit";
import type { Clock } from "@router/money";
import type { AlertSender } from "../sending/alert-sender";
import type { Alert } from "../sending/alert";
import { parseNewChannel, type ChannelRules } from "./channel-input";
import { deleteChannel, findChannel, insertChannelWithin, listChannels, type ChannelRecord } from "./channel-store";
import type { SigningSecrets } from "./signing-secrets";

/** Channels per organisation (Limits, in the service README). */
export const CHANNEL_LIMIT = 20;

const CHANNEL_ID = /^ch_[A-Za-z0-9]{1,64}$/;

export interface ChannelRoutesDeps {
  db: Db;
  clock: Clock;
  rules: ChannelRules;
  secrets: SigningSecrets;
  sender: AlertSender;
}

/** A channel as the API shows it; the signing secret never. */
function renderChannel(c: ChannelRecord) {
  return {
    id: c.id,
    kind: c.kind,
    target: c.target,
    name: c.name,
    thresholds: c.thresholds,
    disabled: c.disabled,
    created_at: c.createdAt.toISOString(),
  };
}

function channelIdOf(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!CHANNEL_ID.test(id)) throw invalid("id", "expected an alert channel id (ch_ followed by letters and digits)");
  return id;
}

function testAlert(channel: ChannelRecord, at: Date): Alert {
  return {
    event: "test",
    orgId: channel.orgId,
    threshold: null,
    keyName: null,
    keyHashPrefix: null,
    agentTag: null,
    data: { channel_id: channel.id, message: "This is a test alert. Alerts for this channel will arrive like this one.", sent_at: at.toISOString() },
    summary: `test alert for channel "${channel.name ?? channel.id}".`,
  };
}

/** Usage-alert channels: list (any role), add, remove and test (`config:write`). */
export function channelRoutes(deps: ChannelRoutesDeps): Router {
  const router = Router();

  router.get("/v1/alerts/channels", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const channels = await listChannels(deps.db, identity.orgId);
    res.json({ data: channels.map(renderChannel), next_cursor: null, email_available: deps.rules.emailAvailable });
  });

  router.post("/v1/alerts/channels", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const input = parseNewChannel(req.body ?? {}, deps.rules);
    const id = `ch_${randomBytes(16).toString("hex")}`;
    const minted = input.kind === "webhook" ? deps.secrets.mint(identity.orgId, id) : null;
    const created = await insertChannelWithin(
      deps.db,
      { id, orgId: identity.orgId, ...input, disabled: false, signingSecretSealed: minted?.sealed ?? null, createdAt: deps.clock.now() },
      CHANNEL_LIMIT,
    );
    if (created === null) {
      throw new DomainError("conflict", `an organisation has at most ${CHANNEL_LIMIT} alert channels; remove one first`, {
        details: { limit: CHANNEL_LIMIT },
      });
    }
    // The signing secret is shown here once; only its sealed form is kept.
    res.status(201).json({ data: minted ? { ...renderChannel(created), signing_secret: minted.secret } : renderChannel(created) });
  });

  router.delete("/v1/alerts/channels/:id", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const id = channelIdOf(req);
    if (!(await deleteChannel(deps.db, identity.orgId, id))) throw notFound("alert channel");
    res.json({ data: { id, deleted: true } });
  });

  router.post("/v1/alerts/channels/:id/test", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const channel = await findChannel(deps.db, identity.orgId, channelIdOf(req));
    if (!channel) throw notFound("alert channel");
    const outcome = await deps.sender.send(channel, testAlert(channel, deps.clock.now()));
    res.json({ data: { status: outcome.status, http_status: outcome.httpStatus, error: outcome.error } });
  });

  return router;
}
