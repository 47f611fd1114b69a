import { randomBytes } from "node:crypto";
import { createPostgresDb, type Db } from "@router/db";
import { DomainError } from "@router/errors";
import { ManualClock } from "@router/money";
import { createOrganisation, startConsole, type RunningConsole } from "@router/console";
import { CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { ledger } from "@router/proto";
import { createTestDatabase, newIdentityKeys, type TestDatabase } from "@router/testkit";
import { DEFAULT_LOGGING, saveLogging } from "../../../console/src/logging-settings/logging-store";
import { GATEWAY_SCHEMA, migrateGateway } from "../../src/app";
import type { Caller } from "../../src/auth/caller";
import { withStoredInput, type ResponsesStorage } from "../../src/ingress/responses/stored-input";
import { grpcConsolePort } from "../../src/console/console-port";
import { StoragePolicy } from "../../src/stored-responses/storage-policy";
import { StoredResponses } from "../../src/stored-responses/stored-response-store";
import { silentLog } from "../harness";

const DAY_MS = 24 * 60 * 60 * 1000;
const KEY_HASH = "a".repeat(64);

const answer = (id: string, text: string) => ({
  id,
  object: "response",
  status: "completed",
  store: true,
  output: [
    { type: "reasoning", id: `rs_${id}_0`, summary: [], content: [{ type: "reasoning_text", text: "thinking" }] },
    { type: "function_call", id: `fc_${id}_1`, call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}', status: "completed" },
    { type: "message", id: `msg_${id}_2`, role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] },
  ],
});
const userInput = [{ type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] }];

/** The error a promise rejects with (a DomainError), for status and field. */
async function refusalOf(p: Promise<unknown>): Promise<{ status: number; code: string; field: unknown; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return { status: err.status, code: err.code, field: err.details?.field, message: err.message };
}

describe("stored responses (the gateway's stored_responses table)", () => {
  let tdb: TestDatabase;
  let db: Db;
  let clock: ManualClock;
  let store: StoredResponses;
  let storage: ResponsesStorage;
  let orgA: string;
  let orgB: string;
  // The logging settings are the console's: a real one on the same database, asked in process.
  let consoleDb: Db;
  let consoleSvc: RunningConsole;
  const callerOf = (orgId: string, hash = KEY_HASH) => ({ orgId, key: { hash } }) as Caller;

  const ledgerClient = new ledger.LedgerServiceClient("127.0.0.1:1", insecure(), CLIENT_OPTIONS);

  beforeAll(async () => {
    tdb = await createTestDatabase("storedresp");
    db = createPostgresDb({ url: tdb.url, schema: GATEWAY_SCHEMA });
    await migrateGateway(db);
    clock = new ManualClock();
    const pepper = randomBytes(32).toString("hex");
    consoleDb = createPostgresDb({ url: tdb.url, schema: "console" });
    consoleSvc = await startConsole({
      db: consoleDb,
      log: silentLog,
      clock,
      httpPort: 0,
      grpcPort: "in-process",
      identityKeys: newIdentityKeys().publicKeys,
      masterKey: randomBytes(32).toString("hex"),
      pepper,
      csrfSecret: randomBytes(32).toString("hex"),
      // Nothing here asks the ledger; the client never connects.
      ledger: ledgerClient,
      defaultMetrics: false,
    });
    orgA = (await createOrganisation(consoleDb, { name: "A", operator: false }, pepper, clock)).orgId;
    orgB = (await createOrganisation(consoleDb, { name: "B", operator: false }, pepper, clock)).orgId;
  });

  beforeEach(() => {
    store = new StoredResponses({ db, clock, masterKey: randomBytes(32).toString("hex"), retentionDays: 30 });
    // No cache: each test's logging settings bind at once.
    storage = { responses: store, policy: new StoragePolicy({ logging: grpcConsolePort(consoleSvc.inProcess), clock, cacheTtlMs: 1 }), log: silentLog };
  });

  afterAll(async () => {
    await consoleSvc.close();
    ledgerClient.close();
    await consoleDb.close();
    await db.close();
    await tdb.drop();
  });

  it("keeps a response sealed at rest and answers it to its organisation only", async () => {
    await store.put(orgA, "gen-a1", { response: answer("a1", "Sunny."), input: userInput });

    expect(await store.get(orgA, "gen-a1")).toEqual({ response: answer("a1", "Sunny."), input: userInput });
    expect(await store.get(orgB, "gen-a1")).toBeNull();
    const raw = await db.query<{ sealed: string }>(`SELECT sealed FROM stored_responses WHERE id = 'gen-a1'`);
    expect(raw.rows[0]?.sealed).toMatch(/^v1\./);
    expect(raw.rows[0]?.sealed).not.toContain("Sunny");
    expect(raw.rows[0]?.sealed).not.toContain("Paris");
  });

  it("does not open a row copied onto another organisation", async () => {
    await store.put(orgA, "gen-copy", { response: answer("copy", "Secret."), input: userInput });
    await db.query(`INSERT INTO stored_responses (org_id, id, item_ids, sealed, created_at, expires_at)
      SELECT $1, id, item_ids, sealed, created_at, expires_at FROM stored_responses WHERE org_id = $2 AND id = 'gen-copy'`, [orgB, orgA]);

    await expect(store.get(orgB, "gen-copy")).rejects.toThrow();
  });

  it("finds output items by id within the organisation", async () => {
    await store.put(orgA, "gen-a2", { response: answer("a2", "Rainy."), input: userInput });

    const found = await store.items(orgA, ["rs_a2_0", "msg_a2_2", "rs_unknown"]);
    expect([...found.keys()].sort()).toEqual(["msg_a2_2", "rs_a2_0"]);
    expect(found.get("msg_a2_2")).toMatchObject({ responseId: "gen-a2", item: { type: "message", role: "assistant" } });
    expect((await store.items(orgB, ["rs_a2_0"])).size).toBe(0);
  });

  it("forgets a response past its retention, and purges it", async () => {
    await store.put(orgA, "gen-old", { response: answer("old", "Old."), input: userInput });
    clock.advance(30 * DAY_MS - 1000);
    expect(await store.get(orgA, "gen-old")).not.toBeNull();

    clock.advance(1000);
    expect(await store.get(orgA, "gen-old")).toBeNull();
    expect((await store.items(orgA, ["rs_old_0"])).size).toBe(0);
    expect(await store.purge()).toBeGreaterThanOrEqual(1);
    const left = await db.query(`SELECT 1 FROM stored_responses WHERE id = 'gen-old'`);
    expect(left.rowCount).toBe(0);
  });

  it("deletes a response for its organisation only", async () => {
    await store.put(orgA, "gen-del", { response: answer("del", "Bye."), input: userInput });

    expect(await store.delete(orgB, "gen-del")).toBe(false);
    expect(await store.get(orgA, "gen-del")).not.toBeNull();
    expect(await store.delete(orgA, "gen-del")).toBe(true);
    expect(await store.get(orgA, "gen-del")).toBeNull();
  });

  describe("a Responses body completed from the store (previous_response_id, item_reference, store)", () => {
    it("rebuilds the conversation from previous_response_id: its input, its output, then the new input", async () => {
      await store.put(orgA, "gen-p1", { response: answer("p1", "Sunny."), input: userInput });
      const next = { type: "function_call_output", call_id: "call_1", output: "21C" };

      const body = (await withStoredInput({ previous_response_id: "gen-p1", input: [next] }, callerOf(orgA), storage)) as { input: unknown[]; store: boolean };

      expect(body.input).toEqual([...userInput, ...answer("p1", "Sunny.").output, next]);
      expect(body.store).toBe(true);
    });

    it("answers 404 naming previous_response_id for another organisation's, an expired or an unknown response", async () => {
      await store.put(orgA, "gen-p2", { response: answer("p2", "Hi."), input: userInput });

      const other = await refusalOf(withStoredInput({ previous_response_id: "gen-p2", input: "Go on" }, callerOf(orgB), storage));
      expect(other).toMatchObject({ status: 404, code: "not_found", field: "previous_response_id" });
      expect(other.message).toContain("gen-p2");
      clock.advance(31 * DAY_MS);
      const expired = await refusalOf(withStoredInput({ previous_response_id: "gen-p2", input: "Go on" }, callerOf(orgA), storage));
      expect(expired).toMatchObject({ status: 404, field: "previous_response_id" });
    });

    it("replaces item_reference items with the stored items, and answers 404 naming input.N.id for an unknown one", async () => {
      await store.put(orgA, "gen-r1", { response: answer("r1", "Done."), input: userInput });
      const input = [...userInput, { type: "item_reference", id: "rs_r1_0" }, { type: "item_reference", id: "fc_r1_1" }];

      const body = (await withStoredInput({ input }, callerOf(orgA), storage)) as { input: unknown[] };
      expect(body.input).toEqual([...userInput, answer("r1", "Done.").output[0], answer("r1", "Done.").output[1]]);

      const unknown = await refusalOf(withStoredInput({ input: [...userInput, { type: "item_reference", id: "rs_nope_0" }] }, callerOf(orgA), storage));
      expect(unknown).toMatchObject({ status: 404, code: "not_found", field: "input.1.id" });
      const foreign = await refusalOf(withStoredInput({ input: [{ type: "item_reference", id: "rs_r1_0" }] }, callerOf(orgB), storage));
      expect(foreign).toMatchObject({ status: 404, field: "input.0.id" });
      const malformed = await refusalOf(withStoredInput({ input: [{ type: "item_reference", id: 7 }] }, callerOf(orgA), storage));
      expect(malformed).toMatchObject({ status: 400, field: "input.0.id" });
    });

    it("answers store: false when the request says so", async () => {
      const body = (await withStoredInput({ input: "Hi", store: false }, callerOf(orgA), storage)) as { store: boolean };
      expect(body.store).toBe(false);
    });

    it("refuses an explicit store: true with a 400 naming the policy when logging settings exclude the key, and keeps nothing by default", async () => {
      await saveLogging(consoleDb, orgA, { ...DEFAULT_LOGGING, keyExclude: [KEY_HASH] }, clock.now());
      try {
        const refused = await refusalOf(withStoredInput({ input: "Hi", store: true }, callerOf(orgA), storage));
        expect(refused).toMatchObject({ status: 400, code: "invalid_request", field: "store" });
        expect(refused.message).toContain("key_exclude");

        const quiet = (await withStoredInput({ input: "Hi" }, callerOf(orgA), storage)) as { store: boolean };
        expect(quiet.store).toBe(false);
        // Another key of the organisation is not excluded.
        const other = (await withStoredInput({ input: "Hi" }, callerOf(orgA, "b".repeat(64)), storage)) as { store: boolean };
        expect(other.store).toBe(true);
      } finally {
        await saveLogging(consoleDb, orgA, DEFAULT_LOGGING, clock.now());
      }
    });

    it("refuses an explicit store: true when the request asks for zero data retention", async () => {
      const refused = await refusalOf(withStoredInput({ input: "Hi", store: true, provider: { zdr: true } }, callerOf(orgA), storage));
      expect(refused).toMatchObject({ status: 400, field: "store" });
      expect(refused.message).toContain("zdr");
      const quiet = (await withStoredInput({ input: "Hi", provider: { zdr: true } }, callerOf(orgA), storage)) as { store: boolean };
      expect(quiet.store).toBe(false);
    });
  });
});
