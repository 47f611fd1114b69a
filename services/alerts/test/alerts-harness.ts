import { randomBytes } from "node:crypto";
import type { Role } from "@router/access";
import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { signIdentity, type Identity } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { events, TOPICS } from "@router/proto";
import { createTestDatabase, startHttpsReceiver, type HttpsReceiver, newIdentityKeys } from "@router/testkit";
import { startAlerts, type AlertsDeps, type RunningAlerts } from "../src/app";
import { runawayFlaggedEvent, thresholdCrossedEvent } from "./alert-events";

export const TEST_IDENTITY = newIdentityKeys();
export const MASTER_KEY = "alerts-test-master-key";

export interface Caller {
  orgId: string;
  role?: Role;
  credential?: Identity["credential"];
}

export interface ApiResponse {
  status: number;
  // Tests read arbitrary response fields; the shape is what each test asserts.
  body: Record<string, any>;
}

export interface AlertsHarness {
  db: Db;
  bus: EventBus;
  clock: ManualClock;
  receiver: HttpsReceiver;
  alerts: RunningAlerts;
  base: string;
  call(method: string, path: string, caller: Caller | null, body?: unknown): Promise<ApiResponse>;
  /** Adds a webhook channel at the receiver (`/hook/<n>`); returns its id and signing secret. */
  addWebhook(orgId: string, fields?: Record<string, unknown>): Promise<{ id: string; secret: string }>;
  publishCrossing(overrides: Partial<events.ThresholdCrossed>, eventId?: string): Promise<events.ThresholdCrossed>;
  publishFlag(overrides: Partial<events.RunawayFlagged>, eventId?: string): Promise<events.RunawayFlagged>;
  close(): Promise<void>;
}

export const orgId = (): string => `org_${randomBytes(6).toString("hex")}`;

/**
 * The real service in-process: a fresh Postgres database, the memory bus, HTTP on a free port, and
 * a real HTTPS receiver on loopback reached through the test-only outbound override.
 */
export async function startAlertsHarness(label: string, extra: Partial<AlertsDeps> = {}): Promise<AlertsHarness> {
  const testDb = await createTestDatabase(label);
  const db = createPostgresDb({ url: testDb.url, schema: "alerts" });
  const log = createLogger({ level: "silent" });
  const bus = await createBus({ kind: "memory", clientId: label, log, retryDelayMs: 5 });
  const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
  const receiver = await startHttpsReceiver();
  const alerts = await startAlerts({
    db,
    bus,
    log,
    clock,
    httpPort: 0,
    identityKeys: TEST_IDENTITY.publicKeys,
    masterKey: MASTER_KEY,
    outbound: { allowHosts: ["127.0.0.1"], ca: receiver.ca, retries: 2, retryDelayMs: 5, timeoutMs: 1_000 },
    chatHookHost: "127.0.0.1",
    ...extra,
  });
  const base = `http://127.0.0.1:${alerts.httpPort}`;
  const publish = (topic: string, key: string, payload: Uint8Array, id: string | undefined) => bus.publish({ topic, key, type: topic, payload, id });
  let hooks = 0;

  const call: AlertsHarness["call"] = async (method, path, caller, body) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (caller) {
      const identity: Identity = {
        orgId: caller.orgId,
        credential: caller.credential ?? "management",
        keyHash: "b".repeat(64),
        keyName: "test",
        workspaceId: null,
        role: caller.role ?? "owner",
        userId: null,
        operator: false,
      };
      headers["x-router-identity"] = await signIdentity(identity, TEST_IDENTITY.signingKey);
    }
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
  };

  return {
    db,
    bus,
    clock,
    receiver,
    alerts,
    base,
    call,
    async addWebhook(org, fields = {}) {
      hooks++;
      const res = await call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "webhook", target: `${receiver.url}/hook/${hooks}`, ...fields });
      if (res.status !== 201) throw new Error(`adding a webhook failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.data.id as string, secret: res.body.data.signing_secret as string };
    },
    async publishCrossing(overrides, eventId) {
      const crossing = thresholdCrossedEvent(overrides);
      await publish(TOPICS.thresholdCrossed, crossing.orgId, events.ThresholdCrossed.encode(crossing).finish(), eventId);
      return crossing;
    },
    async publishFlag(overrides, eventId) {
      const flag = runawayFlaggedEvent(overrides);
      await publish(TOPICS.runawayFlagged, flag.orgId, events.RunawayFlagged.encode(flag).finish(), eventId);
      return flag;
    },
    async close() {
      await alerts.close();
      await bus.close();
      await receiver.close();
      await db.close();
      await testDb.drop();
    },
  };
}
