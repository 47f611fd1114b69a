import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { packSealed, SecretSealer, unpackSealed, type SealingPurpose } from "@router/sealing";

/** Stored responses' key-encryption labels: their own, so a provider key's never opens one. Never change them. */
export const STORED_RESPONSES: SealingPurpose = { salt: "router-gateway", info: "stored-responses/kek/v1" };

/** How long a stored response is kept when the deployment does not say (OpenAI keeps them 30 days). */
export const DEFAULT_STORED_RESPONSE_DAYS = 30;

/** Expired rows are deleted this often (reads never return them in between). */
export const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** One kept answer: the Responses `response` object and the input items it was given (expanded). */
export interface StoredResponse {
  response: Record<string, unknown>;
  input: Record<string, unknown>[];
}

/** One output item of a stored response, found by its id. */
export interface StoredItem {
  responseId: string;
  item: Record<string, unknown>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The gateway's `stored_responses` table: each row sealed under ROUTER_MASTER_KEY with the
 * organisation and id as its context (a row copied to another organisation does not open), kept
 * `retentionDays` and then gone: reads skip expired rows and `purge` deletes them. Every read and
 * delete is scoped by organisation, so another organisation's id is indistinguishable from none.
 */
export class StoredResponses {
  private readonly sealer: SecretSealer;
  private readonly retentionMs: number;

  constructor(
    private readonly deps: { db: Db; clock: Clock; masterKey: string; retentionDays?: number },
  ) {
    this.sealer = new SecretSealer(deps.masterKey, STORED_RESPONSES);
    this.retentionMs = (deps.retentionDays ?? DEFAULT_STORED_RESPONSE_DAYS) * DAY_MS;
  }

  async put(orgId: string, id: string, stored: StoredResponse): Promise<void> {
    const now = this.deps.clock.now();
    const itemIds = outputItems(stored.response).flatMap((item) => (typeof item.id === "string" ? [item.id] : []));
    const sealed = packSealed(this.sealer.seal(JSON.stringify(stored), contextOf(orgId, id)));
    await this.deps.db.query(
      `INSERT INTO stored_responses (org_id, id, item_ids, sealed, created_at, expires_at) VALUES ($1, $2, $3::text[], $4, $5, $6)
       ON CONFLICT (org_id, id) DO UPDATE SET item_ids = EXCLUDED.item_ids, sealed = EXCLUDED.sealed, expires_at = EXCLUDED.expires_at`,
      [orgId, id, itemIds, sealed, now, new Date(now.getTime() + this.retentionMs)],
    );
  }

  /** The organisation's unexpired response with this id, or null (unknown, expired, deleted or another organisation's). */
  async get(orgId: string, id: string): Promise<StoredResponse | null> {
    const r = await this.deps.db.query<{ sealed: string }>(
      `SELECT sealed FROM stored_responses WHERE org_id = $1 AND id = $2 AND expires_at > $3`,
      [orgId, id, this.deps.clock.now()],
    );
    const row = r.rows[0];
    return row ? this.open(orgId, id, row.sealed) : null;
  }

  /** The organisation's unexpired output items with these ids, by id; ids not found are absent. */
  async items(orgId: string, itemIds: string[]): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    if (itemIds.length === 0) return found;
    const r = await this.deps.db.query<{ id: string; sealed: string }>(
      `SELECT id, sealed FROM stored_responses WHERE org_id = $1 AND item_ids && $2::text[] AND expires_at > $3`,
      [orgId, itemIds, this.deps.clock.now()],
    );
    const wanted = new Set(itemIds);
    for (const row of r.rows) {
      for (const item of outputItems(this.open(orgId, row.id, row.sealed).response)) {
        if (typeof item.id === "string" && wanted.has(item.id)) found.set(item.id, { responseId: row.id, item });
      }
    }
    return found;
  }

  /** Deletes the organisation's response; false when there was none to delete. */
  async delete(orgId: string, id: string): Promise<boolean> {
    const r = await this.deps.db.query(`DELETE FROM stored_responses WHERE org_id = $1 AND id = $2 AND expires_at > $3`, [
      orgId,
      id,
      this.deps.clock.now(),
    ]);
    return r.rowCount > 0;
  }

  /** Deletes every expired response; answers how many. */
  async purge(): Promise<number> {
    const r = await this.deps.db.query(`DELETE FROM stored_responses WHERE expires_at <= $1`, [this.deps.clock.now()]);
    return r.rowCount;
  }

  /**
   * Purges now and then every `intervalMs` until the returned stop is called; a failed purge is
   * logged and tried again at the next tick (reads skip expired rows meanwhile).
   */
  startPurging(log: Logger, intervalMs = PURGE_INTERVAL_MS): () => void {
    const run = () => {
      this.purge().then(
        (n) => {
          if (n > 0) log.info({ purged: n }, "gateway.stored_responses.purged");
        },
        (err: unknown) => log.warn({ err }, "gateway.stored_responses.purge_failed"),
      );
    };
    run();
    const timer = setInterval(run, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  private open(orgId: string, id: string, sealed: string): StoredResponse {
    return JSON.parse(this.sealer.open(unpackSealed(sealed), contextOf(orgId, id))) as StoredResponse;
  }
}

const contextOf = (orgId: string, id: string): string => `stored-response:${orgId}:${id}`;

function outputItems(response: Record<string, unknown>): Record<string, unknown>[] {
  const output = response.output;
  return Array.isArray(output) ? output.filter((o): o is Record<string, unknown> => o !== null && typeof o === "object") : [];
}
