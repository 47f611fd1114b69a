import type { Db, Queryable } from "@router/db";
import { parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { mintKey } from "@router/api-keys";
import { insertKey } from "../keys/key-store";
import { insertMember } from "../people/member-store";
import { ORGANISATION_NAME } from "./display-name";
import { insertOrganisation } from "./organisation-store";

export interface CreatedOrganisation {
  orgId: string;
  workspaceId: string;
  /** Plaintext management key: print it once, it is not stored. */
  managementKey: string;
}

async function createIn(
  q: Queryable,
  input: { name: string; operator: boolean },
  pepper: string,
  clock: Clock,
): Promise<CreatedOrganisation> {
  const name = parseInput(ORGANISATION_NAME, input.name, "name");
  const now = clock.now();
  const { orgId, workspaceId } = await insertOrganisation(q, { name, operator: input.operator, now });
  const minted = mintKey("management", pepper);
  await insertKey(
    q,
    orgId,
    minted,
    {
      name: input.operator ? "operator" : "initial management key",
      workspaceId,
      limitNanos: null,
      limitReset: null,
      limitMode: "hard",
      includeByokInLimit: false,
    },
    now,
  );
  return { orgId, workspaceId, managementKey: minted.plaintext };
}

/** `router org create`: an organisation, its default workspace and one management key. */
export function createOrganisation(
  db: Db,
  input: { name: string; operator: boolean },
  pepper: string,
  clock: Clock,
): Promise<CreatedOrganisation> {
  return db.tx((q) => createIn(q, input, pepper, clock));
}

/**
 * Creates the operator organisation on the first start of an installation, and nothing on any
 * later start. An advisory lock keeps replicas starting together from creating two.
 */
export function ensureOperatorOrganisation(
  db: Db,
  pepper: string,
  clock: Clock,
): Promise<{ created: boolean; managementKey?: string; orgId?: string }> {
  return db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('router-gateway:operator-organisation'))");
    const existing = await q.query(`SELECT 1 FROM organisations WHERE operator LIMIT 1`);
    if (existing.rows.length > 0) return { created: false };
    const created = await createIn(q, { name: "Operator", operator: true }, pepper, clock);
    return { created: true, managementKey: created.managementKey, orgId: created.orgId };
  });
}

/** Whether the installation has its operator organisation yet. */
export async function operatorOrganisationExists(db: Db): Promise<boolean> {
  const r = await db.query(`SELECT 1 FROM organisations WHERE operator LIMIT 1`);
  return r.rows.length > 0;
}

/**
 * The organisation a person gets on first sign-in, with them as its owner and no management key
 * (they act through their session). Call inside a transaction.
 */
export async function createPersonalOrganisation(
  q: Queryable,
  person: { userId: string; name: string | null },
  now: Date,
): Promise<string> {
  // eslint-disable-next-line no-control-regex -- a provider's display name may carry control characters
  const who = (person.name ?? "").replace(/[\u0000-\u001f\u007f]/g, "").trim();
  const name = (who ? `${who}'s organisation` : "My organisation").slice(0, 80);
  const { orgId } = await insertOrganisation(q, { name, operator: false, now });
  await insertMember(q, orgId, person.userId, "owner", now);
  return orgId;
}
