import { randomBytes } from "node:crypto";
import type { Role } from "@router/access";
import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { CallStreams, callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { signIdentity, type Identity } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { events, ledger, TOPICS } from "@router/proto";
import { createTestDatabase, newIdentityKeys } from "@router/testkit";
import { startLedger, type LedgerDeps } from "../src/app";
import type { StripeSettings } from "../src/credits/payment-processor";

/** A ledger on its own fresh database, reached through a real gRPC client over loopback. */
export interface TestLedger {
  clock: ManualClock;
  db: Db;
  /** The test database's URL, for a second replica or a connection of the test's own. */
  url: string;
  grpcPort: number;
  httpPort: number;
  /** The in-process bus threshold crossings are published on. */
  bus: EventBus;
  /** The management routes, as the gateway forwards them (`identity` signs the caller). */
  http(method: string, path: string, caller: Caller, body?: unknown): Promise<{ status: number; json: Record<string, any> }>;
  admit(req: Partial<ledger.AdmitRequest>): Promise<ledger.AdmitResponse>;
  /** The same Admit as a message on AdmitStream, as the gateway sends it (two streams kept open). */
  admitStreamed(req: Partial<ledger.AdmitRequest>): Promise<ledger.AdmitResponse>;
  /** The AdmitStream streams open on the client side. */
  admitStreams(): number;
  /**
   * Settles a served request as the gateway has the ledger do it: publishes the request's record
   * (router.request.completed.v1, served) on the bus and waits until the ledger has handled it.
   */
  settle(served: ServedRequest): Promise<void>;
  /** Releases the hold of a request that served nothing, the same way (its record, not served). */
  release(holdId: string): Promise<void>;
  /** Trims a lease to `keep` (0, the default, releases it) with CloseHolds, as its gateway does. */
  trim(leaseHoldId: string, keep?: bigint): Promise<ledger.CloseHoldsResponse>;
  closeHolds(req: CloseHoldsInput): Promise<ledger.CloseHoldsResponse>;
  lease(req: Partial<ledger.LeaseRequest>): Promise<ledger.LeaseResponse>;
  usage(ceilings: ledger.Ceiling[]): Promise<ledger.SubjectUsage[]>;
  workspaceSpend(req: Partial<ledger.WorkspaceSpendRequest>): Promise<ledger.WorkspaceSpendResponse>;
  budgetSubjects(orgId: string): Promise<ledger.BudgetSubjectsResponse>;
  creditTerms(orgId: string): Promise<ledger.CreditTermsResponse>;
  /** Settled + reserved of one ceiling in its current window, less leases' unspent headroom, through Usage. */
  used(ceiling: ledger.Ceiling): Promise<bigint>;
  close(): Promise<void>;
}

/**
 * A served request's record, as far as the ledger reads it. The request (id, organisation, workspace,
 * agent, BYOK) is the hold's own unless named; a hold id of '' or one the ledger does not know needs
 * `requestId` and `orgId`.
 */
export interface ServedRequest {
  holdId: string;
  listCostNanodollars: bigint;
  billedCostNanodollars?: bigint;
  requestId?: string;
  orgId?: string;
  workspaceId?: string;
  agent?: string;
  isByok?: boolean;
  /** Set when the request was a turn of a run: what the turn did. */
  runTurn?: ledger.RunTurn;
}

/** A CloseHolds request whose items may leave fields unset (a release's `keep_nanodollars`, say). */
export interface CloseHoldsInput {
  settlements?: Array<Partial<ledger.SettleRequest>>;
  releases?: Array<Partial<ledger.ReleaseRequest>>;
  spends?: Array<Partial<ledger.SpendRequest>>;
  renewHoldIds?: string[];
  leaseCovers?: Array<Partial<ledger.LeaseCover>>;
}

export async function startTestLedger(
  opts: {
    holdTtlMs?: number;
    sweepIntervalMs?: number;
    leaseTtlMs?: number;
    leaseShare?: number;
    leaseWaitMs?: number;
    label?: string;
    /** Another replica on this ledger's database (its clock is separate); dropped by the first. */
    replicaOf?: TestLedger;
    budgetRefreshMs?: number;
    thresholdPollMs?: number;
    /** The payment processor's settings (credits). */
    stripe?: StripeSettings;
    /** The operator's fee schedule (credits); default none. */
    fees?: LedgerDeps["fees"];
  } = {},
): Promise<TestLedger> {
  const database = opts.replicaOf
    ? { url: opts.replicaOf.url, drop: async () => undefined }
    : await createTestDatabase(opts.label ?? "ledger");
  const db = createPostgresDb({ url: database.url, schema: "ledger", max: 20 });
  const clock = new ManualClock(new Date("2026-11-18T10:00:00.000Z"));
  const log = createLogger({ level: process.env.LEDGER_TEST_LOG === "1" ? "error" : "silent" });
  const bus = await createBus({ kind: "memory", clientId: "ledger-test", log });
  const app = await startLedger({
    db,
    log,
    clock,
    grpcPort: 0,
    holdTtlMs: opts.holdTtlMs,
    sweepIntervalMs: opts.sweepIntervalMs,
    leaseTtlMs: opts.leaseTtlMs,
    leaseShare: opts.leaseShare,
    leaseWaitMs: opts.leaseWaitMs,
    httpPort: 0,
    identityKeys: TEST_IDENTITY.publicKeys,
    bus,
    budgetRefreshMs: opts.budgetRefreshMs,
    thresholdPollMs: opts.thresholdPollMs ?? 20,
    stripe: opts.stripe,
    fees: opts.fees,
  });
  const client = new ledger.LedgerServiceClient(`127.0.0.1:${app.grpcPort}`, insecure(), CLIENT_OPTIONS);
  const call = { deadlineMs: 10_000, service: "ledger" };
  const streamed = new CallStreams<ledger.AdmitRequest, ledger.AdmitResponse>({
    open: () => client.admitStream(),
    unary: (req) => callUnary(client, client.admit, req, call),
    service: "ledger",
    deadlineMs: call.deadlineMs,
    streams: 2,
    log,
  });
  const usage = async (ceilings: ledger.Ceiling[]) =>
    (await callUnary(client, client.usage, { ceilings }, call)).usage;
  return {
    clock,
    db,
    url: database.url,
    grpcPort: app.grpcPort,
    httpPort: app.httpPort ?? 0,
    bus,
    async http(method, path, caller, body) {
      const res = await fetch(`http://127.0.0.1:${app.httpPort}${path}`, {
        method,
        headers: {
          "x-router-identity": await signIdentity(identity(caller), TEST_IDENTITY.signingKey),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    },
    admit: (req) => callUnary(client, client.admit, ledger.AdmitRequest.fromPartial(req), call),
    admitStreamed: (req) => streamed.call(ledger.AdmitRequest.fromPartial(req)),
    admitStreams: () => streamed.openStreams,
    async settle(served) {
      const request = await requestOfHold(db, served.holdId, served);
      const turn = served.runTurn;
      await publishCompleted(bus, events.RequestCompleted.fromPartial({
        ...request,
        holdId: served.holdId,
        served: true,
        listCostNanodollars: served.listCostNanodollars,
        billedCostNanodollars: served.billedCostNanodollars ?? 0n,
        ...(turn
          ? {
              runId: turn.runId,
              servedModel: turn.model,
              finishReason: turn.finishReason,
              toolCalls: turn.toolCalls,
              invalidToolCalls: turn.failedToolCalls,
              usage: { promptTokens: Number(turn.promptTokens), cachedTokens: Number(turn.cachedTokens) },
            }
          : {}),
      }));
    },
    async release(holdId) {
      const request = await requestOfHold(db, holdId, {});
      await publishCompleted(bus, events.RequestCompleted.fromPartial({ ...request, holdId, served: false, status: "error" }));
    },
    trim: (leaseHoldId, keep = 0n) =>
      callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial({ releases: [{ holdId: leaseHoldId, keepNanodollars: keep }] }), call),
    closeHolds: (req) => callUnary(client, client.closeHolds, ledger.CloseHoldsRequest.fromPartial(req), call),
    lease: (req) => callUnary(client, client.lease, ledger.LeaseRequest.fromPartial(req), call),
    usage,
    workspaceSpend: (req) => callUnary(client, client.workspaceSpend, ledger.WorkspaceSpendRequest.fromPartial(req), call),
    budgetSubjects: (org) => callUnary(client, client.budgetSubjects, ledger.BudgetSubjectsRequest.fromPartial({ orgId: org }), call),
    creditTerms: (org) => callUnary(client, client.creditTerms, ledger.CreditTermsRequest.fromPartial({ orgId: org }), call),
    async used(ceiling) {
      const [u] = await usage([ceiling]);
      if (!u) throw new Error("Usage answered nothing for a ceiling");
      return u.usedNanodollars;
    },
    async close() {
      await streamed.close();
      client.close();
      await app.close();
      await bus.close();
      await db.close();
      await database.drop();
    },
  };
}

type RecordedRequest = Pick<events.RequestCompleted, "requestId" | "orgId" | "workspaceId" | "agent" | "isByok">;

/** The request a hold was admitted for, overridden by what `named` names; a request hold only (a lease has `trim`). */
async function requestOfHold(db: Db, holdId: string, named: Partial<RecordedRequest>): Promise<RecordedRequest> {
  const r = await db.query<{ request_id: string; org_id: string; workspace_id: string; agent: string; is_byok: boolean; is_lease: boolean }>(
    "SELECT request_id, org_id, workspace_id, agent, is_byok, is_lease FROM holds WHERE hold_id = $1",
    [holdId],
  );
  const row = r.rows[0];
  if (row?.is_lease) throw new Error(`${holdId} is a lease: its gateway trims or releases it with CloseHolds (trim)`);
  const request = {
    requestId: named.requestId ?? row?.request_id ?? "",
    orgId: named.orgId ?? row?.org_id ?? "",
    workspaceId: named.workspaceId ?? row?.workspace_id ?? "",
    agent: named.agent ?? row?.agent ?? "",
    isByok: named.isByok ?? row?.is_byok ?? false,
  };
  if (request.requestId === "" || request.orgId === "") throw new Error(`no hold ${holdId}: name the request (requestId, orgId)`);
  return request;
}

/** Publishes a request's record as the gateway does and waits until every consumer on the bus has handled it. */
async function publishCompleted(bus: EventBus, record: events.RequestCompleted): Promise<void> {
  await bus.publish({
    topic: TOPICS.requestCompleted,
    key: record.orgId,
    type: TOPICS.requestCompleted,
    id: record.requestId,
    payload: events.RequestCompleted.encode(record).finish(),
  });
  if (!(await bus.drain(10_000))) throw new Error(`the record of ${record.requestId} was not handled within 10 s`);
}

export const USD = 1_000_000_000n;

/** A key ceiling on a fresh subject, counting BYOK spend unless told otherwise. */
export function keyCeiling(overrides: Partial<ledger.Ceiling> = {}): ledger.Ceiling {
  return {
    subjectKind: "key",
    subjectId: `key_${randomBytes(6).toString("hex")}`,
    limitNanodollars: USD,
    window: ledger.Window.WINDOW_DAILY,
    mode: ledger.LimitMode.LIMIT_MODE_HARD,
    includeByok: true,
    subjectName: "",
    ...overrides,
  };
}

export const requestId = (): string => `gen-${randomBytes(12).toString("hex")}`;

/** The internal secret the test ledger verifies identities with. */
export const TEST_IDENTITY = newIdentityKeys();

/** Who calls a management route: the gateway signs this into the identity it forwards. */
export interface Caller {
  orgId: string;
  role?: Role;
  credential?: Identity["credential"];
  /** A workspace the gateway checked belongs to `orgId` (the route names it). */
  workspace?: string;
}

/** The identity the gateway would sign for `c`. */
export function identity(c: Caller): Identity {
  return {
    orgId: c.orgId,
    credential: c.credential ?? "management",
    keyHash: null,
    keyName: null,
    workspaceId: null,
    role: c.role ?? "owner",
    userId: null,
    operator: false,
    ...(c.workspace ? { workspace: { id: c.workspace, name: "Client" } } : {}),
  };
}

/** A fresh organisation id, so tests sharing a ledger never see each other's budgets. */
export const orgId = (): string => `org_${randomBytes(6).toString("hex")}`;
export const workspaceId = (): string => `ws_${randomBytes(6).toString("hex")}`;

/** A new organisation and its agent's inference key (what opens runs and takes their turns). */
export function runTenant(): { org: string; agent: Caller } {
  const org = orgId();
  return { org, agent: { orgId: org, credential: "inference" } };
}

/** Opens a run with `body` as `agent` (201 expected); answers its id. */
export async function openRunId(l: TestLedger, agent: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await l.http("POST", "/v1/runs", agent, body);
  if (res.status !== 201) throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(res.json)}`);
  return (res.json.data as { id: string }).id;
}
