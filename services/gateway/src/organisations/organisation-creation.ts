import type { Db, Queryable } from "@router/db";
import { invalid } from "@router/errors";
import type { Clock } from "@router/money";
import { mintKey } from "../keys/key-secret";
import { insertKey } from "../keys/key-store";
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
  const name = input.name.trim();
  // Same rule as the organisation resource: 1 to 80 characters, no control characters.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (name.length < 1 || name.length > 80 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw invalid("name", "must be 1 to 80 characters without control characters");
  }
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
