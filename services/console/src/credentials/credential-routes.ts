import { Router, type Request, type Response } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { invalid, notFound } from "@router/errors";
import { identityOf, objectBody, parseInput } from "@router/http-kit";
import { providerKeys } from "@router/management-api";
import type { Clock } from "@router/money";
import { newId } from "@router/random-tokens";
import { providerCredentialContext, type ProviderCredentialSealer } from "@router/sealing";
import type { z } from "zod";
import { cloudKeyHint, settingsOf } from "./cloud-documents";
import {
  deleteCredential,
  insertCredential,
  listCredentials,
  setCredentialDisabled,
  type CredentialRecord,
} from "./credential-store";

const { isCloudProvider } = providerKeys;

export interface CredentialRoutesDeps {
  db: Db;
  sealer: ProviderCredentialSealer;
  clock: Clock;
}

// The bodies are the description's (@router/management-api).
const CREATE_FIELDS: readonly string[] = providerKeys.CREDENTIAL_FIELDS;

type CreateBody = z.infer<typeof providerKeys.createCredentialBody>;

/** What is sealed, the hint shown, and the settings shown: the key, or the cloud's document. */
function secretOf(body: CreateBody): { text: string; hint: string; settings: Record<string, unknown> } {
  const provider: string = body.provider;
  if (isCloudProvider(provider)) {
    const document = (body as Record<string, unknown>)[provider] as Record<string, unknown>;
    const cloud = { provider, ...document } as unknown as providerKeys.CloudCredential;
    return { text: JSON.stringify(document), hint: cloudKeyHint(cloud), settings: settingsOf(cloud) };
  }
  const key = body.api_key as string;
  return { text: key, hint: hintOf(key), settings: {} };
}

// Only `disabled` changes (product rule: to change the key, add a new credential and delete the old).
const PATCH_FIXED: Record<string, string> = Object.fromEntries(
  CREATE_FIELDS.map((f) => [f, "cannot change; only disabled can. Add a new credential and delete this one"]),
);

const ID_PATTERN = /^pk_[0-9A-Za-z]{1,64}$/;

/** Keys of eight characters or more show their last four; shorter ones show nothing. */
function hintOf(apiKey: string): string {
  return apiKey.length >= 8 ? apiKey.slice(-4) : "";
}

function view(c: CredentialRecord) {
  return {
    id: c.id,
    provider_slug: c.providerSlug,
    name: c.name,
    key_hint: c.keyHint,
    tier: c.tier,
    priority: c.priority,
    fallback_policy: c.fallbackPolicy,
    model_filter: c.modelFilter,
    ...(isCloudProvider(c.providerSlug) ? { settings: c.settings } : {}),
    disabled: c.disabled,
    created_at: c.createdAt.toISOString(),
    last_used_at: c.lastUsedAt ? c.lastUsedAt.toISOString() : null,
  };
}

function idParam(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!ID_PATTERN.test(id)) throw invalid("id", "expected a provider credential id (pk_ followed by letters and digits)");
  return id;
}

/**
 * Provider credentials (BYOK): list, add, enable or disable, delete. The key is never returned. The
 * gateway forwards these with the caller's signed identity, and drops its cached dispatch view of the
 * organisation's credentials once a change is answered (other replicas within their few seconds).
 */
export function credentialRoutes(deps: CredentialRoutesDeps): Router {
  const router = Router();
  router.get("/v1/provider-keys", async (req: Request, res: Response) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const { orgId } = identity;
    const rows = await listCredentials(deps.db, orgId);
    res.json({ data: rows.map(view), next_cursor: null });
  });

  router.post("/v1/provider-keys", async (req: Request, res: Response) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const { orgId } = identity;
    const body = parseInput(providerKeys.createCredentialBody, objectBody(req, CREATE_FIELDS));
    const id = newId("pk_");
    const secret = secretOf(body);
    const created = await insertCredential(deps.db, {
      id,
      orgId,
      providerSlug: body.provider,
      name: body.name ?? null,
      keyHint: secret.hint,
      sealed: deps.sealer.seal(secret.text, providerCredentialContext(orgId, id)),
      settings: secret.settings,
      tier: body.tier,
      priority: body.priority,
      fallbackPolicy: body.fallback_policy,
      modelFilter: body.model_filter,
      createdAt: deps.clock.now(),
    });
    res.status(201).json({ data: view(created) });
  });

  router.patch("/v1/provider-keys/:id", async (req: Request, res: Response) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const { orgId } = identity;
    const id = idParam(req);
    const raw = objectBody(req, ["disabled"], PATCH_FIXED);
    if (raw.disabled === undefined) throw invalid("disabled", "required (true or false)");
    const body = parseInput(providerKeys.patchCredentialBody, raw);
    const found = await setCredentialDisabled(deps.db, orgId, id, body.disabled);
    if (!found) throw notFound("provider credential");
    res.json({ data: { id, disabled: body.disabled } });
  });

  router.delete("/v1/provider-keys/:id", async (req: Request, res: Response) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const { orgId } = identity;
    const id = idParam(req);
    const found = await deleteCredential(deps.db, orgId, id);
    if (!found) throw notFound("provider credential");
    res.json({ data: { deleted: true } });
  });

  return router;
}
