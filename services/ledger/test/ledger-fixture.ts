import { randomBytes } from "node:crypto";
import type { Role } from "@router/access";
import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { signIdentity, type Identity } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { ledger } from "@router/proto";
import { createTestDatabase } from "@router/testkit";
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
  settle(req: Partial<ledger.SettleRequest>): Promise<ledger.SettleResponse>;
  /** A `keep` above zero trims a lease instead of releasing it. */
  release(holdId: string, keep?: bigint): Promise<ledger.ReleaseResponse>;
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
    internalSecret: TEST_SECRET,
    bus,
    budgetRefreshMs: opts.budgetRefreshMs,
    thresholdPollMs: opts.thresholdPollMs ?? 20,
    stripe: opts.stripe,
    fees: opts.fees,
  });
  const client = new ledger.LedgerServiceClient(`127.0.0.1:${app.grpcPort}`, insecure(), CLIENT_OPTIONS);
  const call = { deadlineMs: 10_000, service: "ledger" };
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
          "x-router-identity": await signIdentity(identity(caller), TEST_SECRET),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    },
    admit: (req) => callUnary(client, client.admit, ledger.AdmitRequest.fromPartial(req), call),
    settle: (req) => callUnary(client, client.settle, ledger.SettleRequest.fromPartial(req), call),
    release: (holdId, keep) =>
      callUnary(client, client.release, ledger.ReleaseRequest.fromPartial({ holdId, keepNanodollars: keep }), call),
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
      client.close();
      await app.close();
      await bus.close();
      await db.close();
      await database.drop();
    },
  };
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
export const TEST_SECRET = "ledger-test-secret";

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
