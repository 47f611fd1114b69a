import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBus, type EventBus, type Subscription } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { DomainError } from "@router/errors";
import { callUnary, CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { createHttpApp, finishApp, IDENTITY_HEADER, listen, routeAhead, signIdentity, type RunningHttpServer } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { fromUsd, ManualClock } from "@router/money";
import { events, ledger, routing } from "@router/proto";
import { startLedger } from "@router/ledger";
import { startRouting } from "@router/routing";
import {
  createTestDatabase,
  parseEventStream,
  startFakeAnthropic,
  startFakeGemini,
  startFakeOpenAi,
  newIdentityKeys,
  uniqueName,
  waitFor,
  type FakeUpstream,
  type TestDatabase,
} from "@router/testkit";
import type { Caller, CallerKey } from "../../src/auth/caller";
import { SpendLeases } from "../../src/spend/spend-leases";
import { HoldClosings } from "../../src/spend/hold-closings";
import { grpcRoutingPort } from "../../src/routing/routing-port";
import { grpcLedgerPort } from "../../src/spend/ledger-port";
import { CHAT_COMPLETIONS_PATH, chatCompletionsListener } from "../../src/chat/completions-route";
import { REQUEST_COMPLETED_TOPIC } from "../../src/chat/request-outcome";
import { callerMiddleware, type ResolveCaller } from "../../src/auth/authenticate";
import { UpstreamDispatcher, type UpstreamDispatcherOptions } from "../../src/dispatch/upstream-dispatcher";
import { createRecentGenerations } from "../../src/generation/recent-generations";
import { generationRoutes } from "../../src/generation/routes";
import type { CredentialSource, DispatchCredential } from "../../src/provider-keys/dispatch-credential";
import type { GatewayMetrics } from "../../src/metrics";
import { filterAllows } from "../../src/provider-keys/model-filter";

export const silent = createLogger({ level: "silent" });

/** A dead address: the catalog's base URLs point here so only the gateway's overrides can work. */
const UNREACHABLE = "http://127.0.0.1:9";

/**
 * Test catalog, prices in USD per million tokens. One endpoint per model except `test/multi`,
 * whose endpoints the routing service orders cheapest first (groq, then openai).
 */
export function testCatalog() {
  const provider = (slug: string, api_family: string) => ({
    slug,
    name: slug,
    hq_country: "US",
    datacenters: ["US"],
    privacy_policy_url: null,
    tos_url: null,
    status_page_url: null,
    api_family,
    base_url: `${UNREACHABLE}/v1`,
    self_hosted: false,
  });
  const model = (id: string) => ({
    id,
    canonical_slug: id,
    name: id,
    created: 1_700_000_000,
    description: null,
    context_length: 128_000,
    architecture: null,
    supported_parameters: null,
    default_parameters: null,
    resale_permitted: "unknown",
    byok_only: true,
    is_free: false,
    deprecation_date: null,
  });
  const endpoint = (providerSlug: string, modelId: string, prompt: number, completion: number, cached: number | null = null) => ({
    id: `ep_${providerSlug}_${modelId.split("/")[1]}`,
    model: modelId,
    provider: providerSlug,
    upstream_model: `${providerSlug}-${modelId.split("/")[1]}-upstream`,
    context_length: 128_000,
    max_output_tokens: 4096,
    pricing: { prompt, completion, cached_prompt: cached },
    quantization: null,
    supported_parameters: [],
  });
  return {
    version: 1,
    providers: [
      provider("openai", "openai"),
      provider("groq", "openai"),
      provider("mistral", "openai"),
      provider("anthropic", "anthropic"),
      provider("google", "google"),
    ],
    models: ["test/gpt", "test/claude", "test/gemini", "test/fast", "test/spare", "test/multi"].map(model),
    endpoints: [
      endpoint("openai", "test/gpt", 2, 8, 1),
      endpoint("anthropic", "test/claude", 3, 15, 0.3),
      endpoint("google", "test/gemini", 1, 4),
      endpoint("groq", "test/fast", 0.5, 1),
      endpoint("mistral", "test/spare", 1, 3),
      endpoint("groq", "test/multi", 0.5, 1),
      endpoint("openai", "test/multi", 2, 8),
    ],
  };
}

export interface Fakes {
  openai: FakeUpstream;
  groq: FakeUpstream;
  mistral: FakeUpstream;
  anthropic: FakeUpstream;
  google: FakeUpstream;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface StreamReply {
  status: number;
  headers: Headers;
  /** The raw event-stream text. */
  text: string;
  /** Parsed `data:` payloads, `[DONE]` excluded. */
  chunks: any[];
  done: boolean;
  comments: string[];
}

export interface ChatHarness {
  url: string;
  orgId: string;
  fakes: Fakes;
  clock: ManualClock;
  /** Completion events published for this harness's organisations, by generation id. */
  events: Map<string, events.RequestCompleted>;
  /** Bearer tokens for test keys. */
  addKey(token: string, key?: Partial<CallerKey>, orgId?: string): Caller;
  /** Replaces an organisation's enabled credentials. */
  setCredentials(orgId: string, creds: Partial<DispatchCredential>[]): void;
  post(body: unknown, opts?: { token?: string; headers?: Record<string, string> }): Promise<Reply>;
  stream(body: unknown, opts?: { token?: string; headers?: Record<string, string> }): Promise<StreamReply>;
  get(path: string, token?: string): Promise<Reply>;
  eventFor(id: string): Promise<events.RequestCompleted>;
  /** Settled spend plus in-flight worst cases on a key's ceiling (Usage, from the ledger). */
  keyUsage(caller: Caller): Promise<bigint>;
  /** Upstream requests received by every fake. */
  upstreamCalls(): number;
  /** Calls a routing management route (presets, defaults) as the organisation's owner. */
  manageRouting(method: string, path: string, body?: unknown, orgId?: string): Promise<Reply>;
  dispatcher: UpstreamDispatcher;
  close(): Promise<void>;
}

export const DEFAULT_TOKEN = "rt-v1-test";

export async function startChatHarness(
  opts: {
    dispatcher?: UpstreamDispatcherOptions;
    keepaliveMs?: number;
    metrics?: GatewayMetrics;
    /** Admit hard-ceiling requests from spend leases used this long (by the harness clock). Default: no leases. */
    leaseUseMs?: number;
  } = {},
): Promise<ChatHarness> {
  const database: TestDatabase = await createTestDatabase("chat");
  const clock = new ManualClock(new Date("2026-11-18T10:00:00.000Z"));
  const routingDb: Db = createPostgresDb({ url: database.url, schema: "routing" });
  const ledgerDb: Db = createPostgresDb({ url: database.url, schema: "ledger" });
  const catalogFile = join(mkdtempSync(join(tmpdir(), "chat-catalog-")), "catalog.json");
  writeFileSync(catalogFile, JSON.stringify(testCatalog()));
  const identityKeys = newIdentityKeys();
  const routingSvc = await startRouting({ db: routingDb, log: silent, clock, httpPort: 0, grpcPort: 0, catalogFile, identityKeys: identityKeys.publicKeys });
  // The ledger settles finished requests from their events on this bus, as deployed.
  const bus: EventBus = await createBus({ kind: "memory", clientId: "gateway-test", log: silent });
  const ledgerSvc = await startLedger({ db: ledgerDb, log: silent, clock, grpcPort: 0, bus });
  const routingClient = new routing.RoutingServiceClient(`127.0.0.1:${routingSvc.grpcPort}`, insecure(), CLIENT_OPTIONS);
  const ledgerClient = new ledger.LedgerServiceClient(`127.0.0.1:${ledgerSvc.grpcPort}`, insecure(), CLIENT_OPTIONS);

  const fakes: Fakes = {
    openai: await startFakeOpenAi(),
    groq: await startFakeOpenAi(),
    mistral: await startFakeOpenAi({ flavour: "mistral" }),
    anthropic: await startFakeAnthropic(),
    google: await startFakeGemini(),
  };
  const providerBaseUrls = Object.fromEntries(Object.entries(fakes).map(([slug, f]) => [slug, f.url]));

  const orgId = uniqueName("org");
  const callers = new Map<string, Caller>();
  const credentials = new Map<string, DispatchCredential[]>();
  const source: CredentialSource = {
    enabledFor: async (org) => credentials.get(org) ?? [],
    allows: (c, modelId) => filterAllows(c.modelFilter, modelId),
    markUsed: () => undefined,
  };
  const setCredentials = (org: string, creds: Partial<DispatchCredential>[]) =>
    credentials.set(
      org,
      creds.map((c, i) => ({
        id: `pk_${org}_${i}`,
        providerSlug: "openai",
        apiKey: `sk-${c.providerSlug ?? "openai"}-${i}`,
        tier: "prioritized",
        priority: i,
        fallbackPolicy: "platform",
        modelFilter: {},
        ...c,
      })),
    );
  setCredentials(
    orgId,
    Object.keys(fakes).map((slug) => ({ providerSlug: slug, apiKey: `sk-${slug}-org-key` })),
  );

  const addKey = (token: string, key: Partial<CallerKey> = {}, org = orgId): Caller => {
    const caller: Caller = {
      orgId: org,
      operator: false,
      key: {
        hash: uniqueName("keyhash"),
        prefix: token.slice(0, 10),
        name: "test key",
        label: null,
        class: "inference",
        workspaceId: "ws_test",
        workspaceName: "Test workspace",
        limitNanos: null,
        limitReset: null,
        limitMode: "hard",
        includeByokInLimit: true,
        paused: false,
        pausedReason: null,
        expiresAt: null,
        ...key,
      },
    };
    callers.set(token, caller);
    return caller;
  };
  addKey(DEFAULT_TOKEN);

  // Stands in for the gateway's key authentication: bearer token → caller.
  const resolveCaller: ResolveCaller = async (req) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const caller = token ? callers.get(token) : undefined;
    if (!caller) throw new DomainError("unauthorized", "Authorization: unknown key");
    return caller;
  };
  const authenticate = callerMiddleware(resolveCaller);

  const seen = new Map<string, events.RequestCompleted>();
  const orgs = () => new Set([...callers.values()].map((c) => c.orgId));
  const subscription: Subscription = await bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: uniqueName("test"),
    handler: async (e) => {
      const decoded = events.RequestCompleted.decode(e.payload);
      if (orgs().has(decoded.orgId)) seen.set(decoded.requestId, decoded);
    },
  });

  const dispatcher = new UpstreamDispatcher(opts.dispatcher);
  const recent = createRecentGenerations({ log: silent });
  // Admit on streams, as the gateway sends it to a ledger over the network.
  const ledgerPort = grpcLedgerPort(ledgerClient, { deadlineMs: 5_000, admitStreams: 2, log: silent });
  const closings = new HoldClosings({ send: (batch) => ledgerPort.closeHolds(batch), log: silent, batchMs: 1 });
  const leases =
    opts.leaseUseMs === undefined
      ? undefined
      : new SpendLeases({
          lease: (req) => ledgerPort.lease(req),
          closings,
          clock,
          log: silent,
          useMs: opts.leaseUseMs,
          onLeaseAdmission: opts.metrics?.leaseAdmitted,
          onLeaseCall: opts.metrics?.leaseCalled,
        });
  const app = createHttpApp({ log: silent });
  const chat = chatCompletionsListener({
    resolveCaller,
    routing: grpcRoutingPort(routingClient, { deadlineMs: 5_000 }),
    ledger: ledgerPort,
    closings,
    leases,
    credentials: source,
    bus,
    log: silent,
    clock,
    recent,
    upstream: dispatcher,
    providerBaseUrls,
    keepaliveMs: opts.keepaliveMs,
    metrics: opts.metrics,
  });
  app.use(generationRoutes({ authenticate, recent }));
  finishApp(app, silent);
  const server: RunningHttpServer = await listen(routeAhead({ method: "POST", path: CHAT_COMPLETIONS_PATH, listener: chat }, app), 0);
  const url = `http://127.0.0.1:${server.port}`;

  const manageRouting = async (method: string, path: string, body?: unknown, org = orgId): Promise<Reply> => {
    const identity = { orgId: org, credential: "management" as const, keyHash: "f".repeat(64), keyName: "harness", workspaceId: null, role: "owner" as const, userId: null, operator: false };
    const res = await fetch(`http://127.0.0.1:${routingSvc.httpPort}${path}`, {
      method,
      headers: { [IDENTITY_HEADER]: await signIdentity(identity, identityKeys.signingKey), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  // Routing's default is a weighted random draw; these tests expect the cheapest endpoint first, so
  // each organisation ranks by price (the draw has tests of its own in routing).
  const priceSorted = new Map<string, Promise<unknown>>();
  const sortByPrice = (token: string | undefined) => {
    const org = callers.get(token ?? DEFAULT_TOKEN)?.orgId;
    if (!org) return Promise.resolve();
    if (!priceSorted.has(org)) priceSorted.set(org, manageRouting("PUT", "/v1/routing/defaults", { default_sort: "price" }, org));
    return priceSorted.get(org);
  };

  const request = async (body: unknown, o: { token?: string; headers?: Record<string, string> } = {}) => {
    await sortByPrice(o.token);
    return fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${o.token ?? DEFAULT_TOKEN}`, ...o.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  };

  return {
    url,
    orgId,
    fakes,
    clock,
    events: seen,
    addKey,
    setCredentials,
    dispatcher,
    async post(body, o) {
      const res = await request(body, o);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    async stream(body, o) {
      const res = await request(body, o);
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, ...parseEventStream(text) };
    },
    async get(path, token = DEFAULT_TOKEN) {
      const res = await fetch(url + path, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    eventFor: (id) => waitFor(() => seen.get(id), { what: `completion event ${id}` }),
    async keyUsage(caller) {
      const limit = caller.key.limitNanos ?? fromUsd(1000);
      const res = await callUnary(
        ledgerClient,
        ledgerClient.usage,
        {
          ceilings: [
            {
              subjectKind: "key",
              subjectId: caller.key.hash,
              limitNanodollars: limit,
              window: ledger.Window.WINDOW_LIFETIME,
              mode: ledger.LimitMode.LIMIT_MODE_HARD,
              includeByok: true,
              subjectName: "",
            },
          ],
        },
        { deadlineMs: 5_000, service: "ledger" },
      );
      return res.usage[0]?.usedNanodollars ?? 0n;
    },
    upstreamCalls: () => Object.values(fakes).reduce((n, f) => n + f.requests.length, 0),
    manageRouting,
    async close() {
      await server.close();
      leases?.close();
      closings.close();
      await ledgerPort.close();
      await dispatcher.close();
      await subscription.close();
      await bus.close();
      await Promise.all(Object.values(fakes).map((f) => f.close()));
      routingClient.close();
      ledgerClient.close();
      await ledgerSvc.close();
      await routingSvc.close();
      await Promise.all([routingDb.close(), ledgerDb.close()]);
      await database.drop();
    },
  };
}

export const userMessage = (text = "Hello") => [{ role: "user", content: text }];
