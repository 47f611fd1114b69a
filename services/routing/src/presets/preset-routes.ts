import { Router, type Request } from "express";
import { routing } from "@router/management-api";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { invalid, notFound } from "@router/errors";
import { identityOf, parseInput, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Clock } from "@router/money";
import type { CatalogCache } from "../catalog/catalog-cache";
import { readPresetBody } from "./preset-body";
import type { PresetCache } from "./preset-cache";
import { PRESET_SLUG, presetReference } from "./preset-reference";
import { addVersion, createPreset, deletePreset, findPreset, listPresets, versionBody, type StoredPreset, type StoredVersion } from "./preset-store";

export interface PresetRoutesDeps {
  db: Db;
  catalog: CatalogCache;
  presets: PresetCache;
  clock: Clock;
  /** Verifies the gateway-signed identity (`x-router-identity`). */
  identityKeys: IdentityPublicKeys;
}

// The bodies as the API description gives them (@router/management-api): `body` must be a JSON
// object, whose settings readPresetBody then keeps and checks against the catalog.
const CreateBody = routing.createPresetBody;
const VersionBody = routing.presetVersionBody;
const RevertBody = routing.revertPresetBody;

/**
 * The preset routes, scoped to the signed identity's organisation: reads for any role, writes with
 * `config:write`. Every body is validated before anything is stored, and every write evicts the
 * preset from Plan's cache on every replica.
 */
export function presetRoutes(deps: PresetRoutesDeps): Router {
  const router = Router();
  router.use("/v1/presets", requireIdentity(deps.identityKeys));

  const reader = (req: Request) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    return identity.orgId;
  };
  const writer = (req: Request) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    return identity.orgId;
  };
  const slugOf = (req: Request) => {
    const slug = String(req.params.slug ?? "");
    if (!PRESET_SLUG.test(slug)) throw notFound("preset");
    return slug;
  };
  const settingsOf = (body: unknown) => {
    if (body === undefined) throw invalid("body", "required");
    return readPresetBody(body, deps.catalog.snapshot());
  };

  router.get("/v1/presets", async (req, res) => {
    const orgId = reader(req);
    res.json({ data: (await listPresets(deps.db, orgId)).map(presetJson) });
  });

  router.post("/v1/presets", async (req, res) => {
    const orgId = writer(req);
    const input = parseInput(CreateBody, req.body ?? {});
    const { settings, dropped } = settingsOf(input.body);
    const created = await createPreset(
      deps.db,
      orgId,
      { slug: input.slug, name: input.name, description: input.description ?? null, body: settings },
      deps.clock.now(),
    );
    // A request may have named the slug before it existed: it is remembered as absent.
    await deps.presets.changed(orgId, input.slug);
    res.status(201).json({ data: { ...presetJson(created), dropped } });
  });

  router.get("/v1/presets/:slug", async (req, res) => {
    const orgId = reader(req);
    const found = await findPreset(deps.db, orgId, slugOf(req));
    if (!found) throw notFound("preset");
    res.json({ data: { ...presetJson(found.preset), versions: found.versions.map(versionJson) } });
  });

  router.post("/v1/presets/:slug/versions", async (req, res) => {
    const orgId = writer(req);
    const slug = slugOf(req);
    const input = parseInput(VersionBody, req.body ?? {});
    const { settings, dropped } = settingsOf(input.body);
    const saved = await addVersion(
      deps.db,
      orgId,
      slug,
      { body: settings, note: input.note ?? null, name: input.name, description: input.description },
      deps.clock.now(),
    );
    if (!saved) throw notFound("preset");
    await deps.presets.changed(orgId, slug);
    res.status(201).json({ data: { ...presetJson(saved), dropped } });
  });

  router.post("/v1/presets/:slug/revert", async (req, res) => {
    const orgId = writer(req);
    const slug = slugOf(req);
    const input = parseInput(RevertBody, req.body ?? {});
    const body = await versionBody(deps.db, orgId, slug, input.version);
    if (!body) throw (await findPreset(deps.db, orgId, slug)) ? invalid("version", `preset ${slug} has no version ${input.version}`) : notFound("preset");
    const saved = await addVersion(deps.db, orgId, slug, { body, note: input.note ?? `revert to version ${input.version}` }, deps.clock.now());
    if (!saved) throw notFound("preset");
    await deps.presets.changed(orgId, slug);
    res.status(201).json({ data: presetJson(saved) });
  });

  router.delete("/v1/presets/:slug", async (req, res) => {
    const orgId = writer(req);
    const slug = slugOf(req);
    if (!(await deletePreset(deps.db, orgId, slug))) throw notFound("preset");
    await deps.presets.changed(orgId, slug);
    res.json({ data: { slug, deleted: true } });
  });

  return router;
}

function presetJson(p: StoredPreset) {
  return {
    slug: p.slug,
    name: p.name,
    description: p.description,
    version: p.version,
    body: p.body,
    reference: presetReference(p.slug),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

function versionJson(v: StoredVersion) {
  return { version: v.version, body: v.body, note: v.note, created_at: v.createdAt.toISOString() };
}
