import { randomBytes } from "node:crypto";
import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, notFound } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { checkTargetUrl, newSigningSecret, type AllowedHosts } from "@router/outbound";
import type { Broadcaster } from "../delivery/broadcaster";
import { testEvent } from "../records/test-record";
import { checkHeaderPair, createDestinationBody, destinationIdOf, patchDestinationBody } from "./destination-input";
import { renderDestination } from "./destination-row";
import { headerHint, type DestinationSecrets } from "./destination-secrets";
import {
  deleteDestination,
  findDestination,
  insertDestination,
  listDestinations,
  MAX_DESTINATIONS,
  updateDestination,
} from "./destination-store";

export interface DestinationRoutesDeps {
  db: Db;
  clock: Clock;
  secrets: DestinationSecrets;
  broadcaster: Broadcaster;
  /** TEST ONLY: hosts a target may name although they are not public (loopback receivers). */
  allowedHosts?: AllowedHosts;
}

/** A destination id: `dst_` and 128 bits of CSPRNG output. */
function newDestinationId(): string {
  return `dst_${randomBytes(16).toString("hex")}`;
}

/**
 * Broadcast destinations (in the service README): any role lists; adding, changing, removing and the test
 * record need `config:write`. Every query is scoped to the caller's organisation, so another
 * organisation's id is a 404.
 */
export function destinationRoutes(deps: DestinationRoutesDeps): Router {
  const router = Router();

  router.get("/v1/broadcast/destinations", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const rows = await listDestinations(deps.db, identity.orgId);
    res.json({ data: rows.map(renderDestination), next_cursor: null });
  });

  router.post("/v1/broadcast/destinations", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const body = parseInput(createDestinationBody, req.body ?? {});
    checkTargetUrl(body.url, "url", deps.allowedHosts);
    const header = checkHeaderPair(body);
    const id = newDestinationId();
    const where = { orgId: identity.orgId, destinationId: id };
    const signingSecret = body.kind === "webhook" ? newSigningSecret() : null;
    const created = await insertDestination(deps.db, {
      id,
      orgId: identity.orgId,
      kind: body.kind,
      url: body.url,
      name: body.name ?? null,
      sampleRate: body.sample_rate,
      headerName: header?.name ?? null,
      headerHint: header ? headerHint(header.value) : null,
      headerValueSealed: header ? deps.secrets.seal(header.value, { ...where, slot: "header_value" }) : null,
      signingSecretSealed: signingSecret === null ? null : deps.secrets.seal(signingSecret, { ...where, slot: "signing_secret" }),
      createdAt: deps.clock.now(),
    });
    if (!created) {
      throw new DomainError("conflict", `an organisation holds at most ${MAX_DESTINATIONS} broadcast destinations; remove one first`, {
        details: { limit: MAX_DESTINATIONS },
      });
    }
    // The signing secret is shown here once and never again.
    res.status(201).json({ data: { ...renderDestination(created), ...(signingSecret === null ? {} : { signing_secret: signingSecret }) } });
  });

  router.patch("/v1/broadcast/destinations/:id", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const id = destinationIdOf(req.params.id);
    const body = parseInput(patchDestinationBody, req.body ?? {});
    const updated = await updateDestination(deps.db, identity.orgId, id, {
      disabled: body.disabled,
      sampleRate: body.sample_rate,
      name: body.name,
    });
    if (!updated) throw notFound("broadcast destination");
    res.json({ data: renderDestination(updated) });
  });

  router.delete("/v1/broadcast/destinations/:id", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const id = destinationIdOf(req.params.id);
    if (!(await deleteDestination(deps.db, identity.orgId, id))) throw notFound("broadcast destination");
    res.json({ data: { id, deleted: true } });
  });

  router.post("/v1/broadcast/destinations/:id/test", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const id = destinationIdOf(req.params.id);
    const destination = await findDestination(deps.db, identity.orgId, id);
    if (!destination) throw notFound("broadcast destination");
    const outcome = await deps.broadcaster.sendNow(destination, testEvent(identity, deps.clock.now()));
    res.json({ data: { delivered: outcome.status === "sent", http_status: outcome.httpStatus, error: outcome.error } });
  });

  return router;
}
