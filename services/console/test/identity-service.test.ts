import { hashKey, mintKey } from "@router/api-keys";
import { status } from "@grpc/grpc-js";
import type { consoleRpc } from "@router/proto";
import { createOrganisation } from "../src/app";
import { insertKey } from "../src/keys/key-store";
import { CONSOLE_TEST_PEPPER, startConsoleHarness, type ConsoleHarness } from "./console-harness";

/**
 * ConsoleService's identity methods as the gateway asks them on a cache miss (in process, over the
 * generated client): keys and sessions by hash, a workspace of an organisation, its name, and the
 * runaway pause.
 */
let h: ConsoleHarness;
beforeAll(async () => {
  h = await startConsoleHarness("cidentity");
});
afterAll(async () => h.close());

/** One unary call of the generated client, as a promise. */
function rpc<Res>(send: (client: consoleRpc.ConsoleServiceClient, done: (err: Error | null, res: Res) => void) => unknown): Promise<Res> {
  return new Promise((resolve, reject) => send(h.console.inProcess, (err, res) => (err ? reject(err) : resolve(res))));
}

const findKey = (hash: string) => rpc<consoleRpc.FindKeyResponse>((c, done) => c.findKey({ hash }, done));
const findSession = (tokenHash: string) => rpc<consoleRpc.FindSessionResponse>((c, done) => c.findSession({ tokenHash }, done));
const findWorkspace = (orgId: string, workspaceId: string) => rpc<consoleRpc.FindWorkspaceResponse>((c, done) => c.findWorkspace({ orgId, workspaceId }, done));
const organisationName = (orgId: string) => rpc<consoleRpc.OrganisationNameResponse>((c, done) => c.organisationName({ orgId }, done));

describe("FindKey", () => {
  it("answers a key's record by its peppered hash, and nothing for an unknown hash", async () => {
    const org = await createOrganisation(h.db, { name: "Finders", operator: false }, CONSOLE_TEST_PEPPER, h.clock);
    const found = await findKey(hashKey(org.managementKey, CONSOLE_TEST_PEPPER));
    expect(found.key).toMatchObject({ orgId: org.orgId, class: "management", operator: false, disabled: false, paused: false, workspaceId: org.workspaceId });
    expect(found.key?.limitNanodollars).toBeUndefined();
    expect((await findKey("0".repeat(64))).key).toBeUndefined();
  });

  it("carries a key's ceiling in nanodollars and its workspace's name", async () => {
    const org = await createOrganisation(h.db, { name: "Ceilings", operator: false }, CONSOLE_TEST_PEPPER, h.clock);
    const minted = mintKey("inference", CONSOLE_TEST_PEPPER);
    const settings = { name: "bot", workspaceId: org.workspaceId, limitNanos: 2_500_000_000n, limitReset: "daily" as const, limitMode: "soft" as const, includeByokInLimit: true };
    await insertKey(h.db, org.orgId, minted, settings, h.clock.now());
    const { key } = await findKey(minted.hash);
    expect(key).toMatchObject({ class: "inference", name: "bot", limitNanodollars: 2_500_000_000n, limitReset: "daily", limitMode: "soft", includeByokInLimit: true });
    expect(key?.workspaceName).toEqual(expect.any(String));
  });
});

describe("FindSession, FindWorkspace and OrganisationName", () => {
  it("answer nothing for what does not exist, and never another organisation's workspace", async () => {
    const mine = await createOrganisation(h.db, { name: "Mine", operator: false }, CONSOLE_TEST_PEPPER, h.clock);
    const theirs = await createOrganisation(h.db, { name: "Theirs", operator: false }, CONSOLE_TEST_PEPPER, h.clock);
    expect((await findSession("f".repeat(64))).session).toBeUndefined();
    expect((await findWorkspace(mine.orgId, mine.workspaceId)).workspace?.id).toBe(mine.workspaceId);
    expect((await findWorkspace(mine.orgId, theirs.workspaceId)).workspace).toBeUndefined();
    expect((await organisationName(theirs.orgId)).name).toBe("Theirs");
    expect((await organisationName("org_nobody")).name).toBeUndefined();
  });
});

describe("ApplyRunawayFlag", () => {
  it("pauses the flagged key once, never another organisation's, and refuses a flag without its ids", async () => {
    const org = await createOrganisation(h.db, { name: "Runaways", operator: false }, CONSOLE_TEST_PEPPER, h.clock);
    const other = await createOrganisation(h.db, { name: "Bystanders", operator: false }, CONSOLE_TEST_PEPPER, h.clock);
    const hash = hashKey(org.managementKey, CONSOLE_TEST_PEPPER);
    const theirs = hashKey(other.managementKey, CONSOLE_TEST_PEPPER);
    const apply = (flagId: string, orgId: string, keyHash: string): Promise<consoleRpc.ApplyRunawayFlagResponse> =>
      rpc((c, done) => c.applyRunawayFlag({ flagId, orgId, keyHash }, done));
    expect((await apply("flag_1", org.orgId, hash)).result).toBe("paused");
    expect((await apply("flag_1", org.orgId, hash)).result).toBe("duplicate");
    expect((await findKey(hash)).key).toMatchObject({ paused: true, pausedReason: "runaway" });
    expect((await apply("flag_2", org.orgId, theirs)).result).toBe("unchanged");
    expect((await findKey(theirs)).key?.paused).toBe(false);
    await expect(apply("", org.orgId, hash)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });
});
